// `axon network [NODE]`: the network counters of the domain's nodes on this host that reach other hosts (UDP,
// RDMA), as each node's service thread copies them into its statistics segment once a second.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/graph/domain_text.hpp"
#include "src/tools/axon/text_table.hpp"

namespace axon::tools {
namespace {

class NetworkCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("network", "Network counters (UDP, RDMA) of the nodes that reach other hosts");
    sub->add_option("node", node_, "Only the nodes of this name, as `axon node list` prints it");
    sub->add_flag("--all", all_, "Also list the counters that are 0 (the text output leaves them out)");
    sub->footer(
        "What Node::network_counters() returns in each node's process, copied by its service thread into its "
        "statistics segment once a second (AGE says how long ago) and read here without any lock and without "
        "joining the domain. Counters of dropped or refused traffic are marked `dropped`; their meaning is in "
        "docs/tools.md. Nodes whose deployment config names no other host have no network counters and are not "
        "listed. Exit status: 0, 1 when NODE has no network counters on this host (or the statistics cannot be "
        "read), 2 on a usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    auto stats = read_live_stats(DomainAddress{.domain_id = globals.domain_id, .shm_dir = {}});
    if (!stats) {
      return report_error(stats.error());
    }
    std::vector<NodeNetworkView> nodes;
    for (NodeNetworkView& n : stats->networks) {
      if (node_.empty() || n.node == node_) {
        nodes.push_back(std::move(n));
      }
    }
    std::sort(nodes.begin(), nodes.end(), [](const NodeNetworkView& a, const NodeNetworkView& b) {
      return a.node != b.node ? a.node < b.node : a.pid < b.pid;
    });
    if (!node_.empty() && nodes.empty()) {
      std::fprintf(stderr,
                   "axon: no node '%s' with network counters in domain %u on this host (`axon node list` shows the "
                   "nodes; only a node whose deployment config names other hosts has them)\n",
                   node_.c_str(), globals.domain_id);
      return kExitFailed;
    }
    print(out, globals.json ? json_of(globals, nodes, stats->problems) : text_of(globals, nodes, stats->problems));
    return kExitOk;
  }

 private:
  [[nodiscard]] std::string text_of(const GlobalOptions& globals, const std::vector<NodeNetworkView>& nodes,
                                    const std::vector<std::string>& problems) const {
    std::string text;
    if (nodes.empty()) {
      text = fmt::format("no node of domain {} on this host reaches another host\n", globals.domain_id);
    }
    for (const NodeNetworkView& n : nodes) {
      text += fmt::format("node {} (pid {}), counters copied {:.1f} s ago\n", n.node, n.pid,
                          static_cast<double>(n.age_ns) / 1e9);
      TextTable table({"COUNTER", "VALUE", ""});
      table.set_align(1, Align::kRight);
      std::size_t zeros = 0;
      for (const NetworkCounterField& field : kNetworkCounterFields) {
        const std::uint64_t value = n.counters.*field.member;
        if (value == 0 && !all_) {
          ++zeros;
          continue;
        }
        table.add_row(
            {std::string(field.name), std::to_string(value), value != 0 && field.counts_drops ? "dropped" : ""});
      }
      text += table.rows() == 0 ? std::string() : table.render();
      if (zeros != 0) {
        text += fmt::format("({} counters are 0: --all lists them)\n", zeros);
      }
      text += "\n";
    }
    for (const std::string& problem : problems) {
      text += "note: not read: " + problem + "\n";
    }
    return text;
  }

  static std::string json_of(const GlobalOptions& globals, const std::vector<NodeNetworkView>& nodes,
                             const std::vector<std::string>& problems) {
    JsonWriter json;
    json.begin_object().member("domain", globals.domain_id).key("nodes").begin_array();
    for (const NodeNetworkView& n : nodes) {
      json.begin_object()
          .member("node", n.node)
          .member("pid", n.pid)
          .member("age_s", static_cast<double>(n.age_ns) / 1e9)
          .key("counters")
          .begin_object();
      for (const NetworkCounterField& field : kNetworkCounterFields) {
        json.member(field.name, n.counters.*field.member);
      }
      json.end_object().end_object();
    }
    json.end_array().key("problems").begin_array();
    for (const std::string& problem : problems) {
      json.value(problem);
    }
    json.end_array().end_object();
    return json.text() + "\n";
  }

  std::string node_;
  bool all_ = false;
};

}  // namespace

std::unique_ptr<Command> make_network_command() { return std::make_unique<NetworkCommand>(); }

}  // namespace axon::tools
