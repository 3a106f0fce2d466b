// `axon node list`: the domain's nodes (participants) on this host, each with its process and endpoints.
#include <fmt/format.h>

#include <memory>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/doctor/check.hpp"
#include "src/tools/axon/graph/domain_text.hpp"
#include "src/tools/axon/text_table.hpp"

namespace axon::tools {
namespace {

class NodeListCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("list", "The domain's nodes on this host: process, liveliness, endpoints, pool");
    sub->footer(
        "A node whose process died shows as not alive until a live node of the domain reclaims it (within its "
        "liveness period), or axon clean removes the domain once no node lives. Exit status: 0, 1 when the "
        "registry cannot be read, 2 on a usage error.");
    return *sub;
  }

  int run(const GlobalOptions& globals, std::FILE* out) override {
    auto view = read_view(globals);
    if (!view) {
      return report_error(view.error());
    }
    if (globals.json) {
      JsonWriter json;
      json.begin_object();
      write_view_members(json, *view);
      json.key("nodes").begin_array();
      for (const ParticipantView& p : view->participants) {
        json.begin_object()
            .member("name", p.name)
            .member("pid", p.pid)
            .member("alive", p.alive)
            .member("publishers", endpoints_of_node(*view, GraphEndpointKind::kPublisher, p.slot))
            .member("subscribers", endpoints_of_node(*view, GraphEndpointKind::kSubscriber, p.slot))
            .member("pool_bytes", p.pool_bytes)
            .end_object();
      }
      json.end_array().end_object();
      print(out, json.text() + "\n");
      return kExitOk;
    }
    TextTable table({"NODE", "PID", "ALIVE", "PUBLISHERS", "SUBSCRIBERS", "POOL"});
    for (std::size_t column : {1U, 3U, 4U, 5U}) {
      table.set_align(column, Align::kRight);
    }
    for (const ParticipantView& p : view->participants) {
      table.add_row({p.name, std::to_string(p.pid), alive_text(p),
                     std::to_string(endpoints_of_node(*view, GraphEndpointKind::kPublisher, p.slot)),
                     std::to_string(endpoints_of_node(*view, GraphEndpointKind::kSubscriber, p.slot)),
                     doctor::format_bytes(p.pool_bytes)});
    }
    if (view->exists) {
      print(out, table.rows() == 0 ? fmt::format("no nodes in domain {}\n", globals.domain_id) : table.render());
    }
    print(out, view_notes(*view));
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_node_list_command() { return std::make_unique<NodeListCommand>(); }

}  // namespace axon::tools
