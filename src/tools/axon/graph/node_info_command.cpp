// `axon node info NODE`: one node's process, pool and every publisher and subscriber it has.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/doctor/check.hpp"
#include "src/tools/axon/graph/domain_text.hpp"
#include "src/tools/axon/text_table.hpp"

namespace axon::tools {
namespace {

class NodeInfoCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("info", "One node: its process, pool and endpoints");
    sub->add_option("node", node_, "The node's name, as `axon node list` prints it")->required();
    sub->footer(
        "Several processes may run nodes of one name: each is shown. Exit status: 0, 1 when no node of that name "
        "is in the domain on this host (or the registry cannot be read), 2 on a usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    auto view = read_view(globals);
    if (!view) {
      return report_error(view.error());
    }
    JsonWriter json;
    json.begin_object();
    write_view_members(json, *view);
    json.key("nodes").begin_array();
    std::string text;
    bool found = false;
    for (const ParticipantView& p : view->participants) {
      if (p.name != node_) {
        continue;
      }
      found = true;
      add_json(json, *view, p);
      text += text_of(*view, p);
    }
    json.end_array().end_object();
    if (!found) {
      std::fprintf(stderr, "axon: no node '%s' in domain %u on this host (axon node list shows the nodes)\n",
                   node_.c_str(), globals.domain_id);
      print(stderr, view_notes(*view));
      return kExitFailed;
    }
    print(out, globals.json ? json.text() + "\n" : text + view_notes(*view));
    return kExitOk;
  }

 private:
  static std::string text_of(const DomainView& view, const ParticipantView& p) {
    TextTable table({"KIND", "TOPIC", "TYPE", "QOS"});
    for_each_endpoint(
        view, [&p](const EndpointView& e) { return e.participant_slot == p.slot; },
        [&table](const EndpointView& e, const TopicView& t, const ParticipantView& /*node*/) {
          table.add_row({kind_word(e.kind), t.name, t.type_name, qos_text(e)});
        });
    return fmt::format("node {}\npid {}, alive: {}, pool {} ({} connections, {} queue slots)\n\n{}\n", p.name, p.pid,
                       alive_text(p), doctor::format_bytes(p.pool_bytes), p.connections, p.queue_slots,
                       table.rows() == 0 ? std::string("no endpoints\n") : table.render());
  }

  static void add_json(JsonWriter& json, const DomainView& view, const ParticipantView& p) {
    json.begin_object()
        .member("name", p.name)
        .member("pid", p.pid)
        .member("alive", p.alive)
        .member("pool_bytes", p.pool_bytes)
        .member("connections", p.connections)
        .member("queue_slots", p.queue_slots);
    json.key("endpoints").begin_array();
    for_each_endpoint(
        view, [&p](const EndpointView& e) { return e.participant_slot == p.slot; },
        [&json](const EndpointView& e, const TopicView& t, const ParticipantView& /*node*/) {
          json.begin_object().member("kind", kind_word(e.kind)).member("topic", t.name).member("type", t.type_name);
          write_qos_members(json, e);
          json.end_object();
        });
    json.end_array().end_object();
  }

  std::string node_;
};

}  // namespace

std::unique_ptr<Command> make_node_info_command() { return std::make_unique<NodeInfoCommand>(); }

}  // namespace axon::tools
