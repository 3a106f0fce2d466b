// The axon command (docs/tools.md): the global options, then one subcommand from commands.hpp.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/tools/axon/commands.hpp"
#include "src/tools/axon/global_options.hpp"

namespace {

int run(int argc, char** argv) {
  using axon::tools::Command;
  CLI::App app("axon: look at a running axon system and the host it runs on (docs/tools.md)", "axon");
  // Global options may come after the subcommand too (`axon doctor --json`): the subcommands, which inherit this
  // setting when added below, hand the options they do not know up to here.
  app.fallthrough();
  // At most one command; none is caught below, after CLI11 had its say about unknown words ("frobnicate").
  app.require_subcommand(0, 1);
  app.footer("Exit status: 0 on success, 1 when the command found a failure, 2 on a usage error.");

  std::optional<std::uint32_t> domain;
  app.add_option("--domain", domain, "The domain to look at (default: $AXON_DOMAIN, else 0)");
  axon::tools::GlobalOptions globals;
  app.add_flag("--json", globals.json, "Print one JSON document instead of text");

  // Command groups (`axon topic list`): a group names one of its commands, which does the work.
  CLI::App& topic = *app.add_subcommand("topic", "Topics of the domain: list, info, echo, hz, bw, delay, pub");
  CLI::App& node = *app.add_subcommand("node", "Nodes (participants) of the domain: list, info");
  for (CLI::App* group : {&topic, &node}) {
    group->require_subcommand(1, 1);
    group->fallthrough();
  }

  // Each command with the group it belongs to (`app` for a command of its own).
  std::vector<std::pair<CLI::App*, std::unique_ptr<Command>>> commands;
  commands.emplace_back(&topic, axon::tools::make_topic_list_command());
  commands.emplace_back(&topic, axon::tools::make_topic_info_command());
  commands.emplace_back(&topic, axon::tools::make_topic_echo_command());
  commands.emplace_back(&topic, axon::tools::make_topic_hz_command());
  commands.emplace_back(&topic, axon::tools::make_topic_bw_command());
  commands.emplace_back(&topic, axon::tools::make_topic_pub_command());
  commands.emplace_back(&topic, axon::tools::make_topic_delay_command());
  commands.emplace_back(&node, axon::tools::make_node_list_command());
  commands.emplace_back(&node, axon::tools::make_node_info_command());
  commands.emplace_back(&app, axon::tools::make_pool_command());
  commands.emplace_back(&app, axon::tools::make_monitor_command());
  commands.emplace_back(&app, axon::tools::make_network_command());
  commands.emplace_back(&app, axon::tools::make_clean_command());
  commands.emplace_back(&app, axon::tools::make_doctor_command());
  commands.emplace_back(&app, axon::tools::make_record_command());
  commands.emplace_back(&app, axon::tools::make_play_command());
  commands.emplace_back(&app, axon::tools::make_info_command());

  std::vector<std::pair<CLI::App*, Command*>> registered;
  registered.reserve(commands.size());
  for (auto& [group, command] : commands) {
    registered.emplace_back(&command->add_to(*group), command.get());
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help is a ParseError of exit code 0; every other one is a usage error.
    return app.exit(error) == 0 ? axon::tools::kExitOk : axon::tools::kExitUsage;
  }

  if (app.get_subcommands().empty()) {
    std::fprintf(stderr, "axon: name a command (axon --help lists them)\n");
    return axon::tools::kExitUsage;
  }

  if (domain) {
    globals.domain_id = *domain;
  } else {
    const char* env = std::getenv("AXON_DOMAIN");  // NOLINT(concurrency-mt-unsafe): before any thread starts
    auto from_env = axon::tools::domain_from_environment(env);
    if (!from_env) {
      std::fprintf(stderr, "axon: %s\n", std::string(from_env.error().message()).c_str());
      return axon::tools::kExitUsage;
    }
    globals.domain_id = *from_env;
  }

  for (const auto& [subcommand, command] : registered) {
    if (subcommand->parsed()) {
      return command->run(globals, stdout);
    }
  }
  return axon::tools::kExitUsage;  // not reached: every subcommand is registered
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    // Commands report what they find as values; this is only what nobody expected (out of memory ...).
    std::fprintf(stderr, "axon: %s\n", error.what());
    return axon::tools::kExitFailed;
  }
}
