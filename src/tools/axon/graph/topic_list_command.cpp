// `axon topic list`: the domain's topics on this host, with their type and how many publish and subscribe.
#include <fmt/format.h>

#include <memory>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/graph/domain_text.hpp"
#include "src/tools/axon/text_table.hpp"

namespace axon::tools {
namespace {

class TopicListCommand final : public Command {
 public:
  CLI::App& add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("list", "The domain's topics on this host: type, serializer, endpoints");
    sub->footer(
        "Read from the domain's registry without joining the domain. Exit status: 0 (also when no node runs), 1 "
        "when the registry cannot be read, 2 on a usage error.");
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
      json.key("topics").begin_array();
      for (const TopicView& t : view->topics) {
        json.begin_object()
            .member("name", t.name)
            .member("type", t.type_name)
            .member("serializer", t.serializer)
            .member("type_hash", fmt::format("{:016x}", t.type_hash))
            .member("publishers", endpoints_of_topic(*view, GraphEndpointKind::kPublisher, t.slot))
            .member("subscribers", endpoints_of_topic(*view, GraphEndpointKind::kSubscriber, t.slot))
            .end_object();
      }
      json.end_array().end_object();
      print(out, json.text() + "\n");
      return kExitOk;
    }
    TextTable table({"TOPIC", "TYPE", "SERIALIZER", "PUBLISHERS", "SUBSCRIBERS"});
    table.set_align(3, Align::kRight);
    table.set_align(4, Align::kRight);
    for (const TopicView& t : view->topics) {
      table.add_row({t.name, t.type_name, t.serializer,
                     std::to_string(endpoints_of_topic(*view, GraphEndpointKind::kPublisher, t.slot)),
                     std::to_string(endpoints_of_topic(*view, GraphEndpointKind::kSubscriber, t.slot))});
    }
    if (view->exists) {
      print(out, table.rows() == 0 ? fmt::format("no topics in domain {}\n", globals.domain_id) : table.render());
    }
    print(out, view_notes(*view));
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_topic_list_command() { return std::make_unique<TopicListCommand>(); }

}  // namespace axon::tools
