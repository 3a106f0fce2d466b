// axon-bench: process-to-process figures of axon next to the same machine's
// baselines. Each subcommand lives in its own file and registers its options
// here; main parses the whole command line, then runs the chosen command,
// which appends its results to one ResultLog that the output options write.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "baselines.hpp"
#include "command.hpp"
#include "latency.hpp"
#include "report.hpp"

namespace {

int run(int argc, char** argv) {
  CLI::App app{
      "axon-bench: latency of axon between two processes, next to this machine's baselines.\n"
      "Run `axon-bench <command> --help` for the options of a command."};
  app.require_subcommand(1);
  app.fallthrough();  // the options below may also follow the subcommand

  std::string json_path;
  app.add_option("--json", json_path,
                 "Also write every result with the machine, git revision, date and command line as JSON to FILE "
                 "('-' for stdout; the tables then go to stderr)")
      ->type_name("FILE");

  // Later subcommands (throughput, scenario FILE) register here the same way.
  const std::vector<axon_bench::Command> commands = {
      axon_bench::add_baseline_command(app),
      axon_bench::add_latency_command(app),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  axon_bench::Output out;
  out.log.run = axon_bench::RunInfo::collect(argc, argv);
  if (json_path == "-") {
    out.text = stderr;
  }
  for (const auto& command : commands) {
    if (command.app->parsed()) {
      command.run(out);
    }
  }
  if (!json_path.empty()) {
    if (const std::string error = axon_bench::write_json(out.log, json_path); !error.empty()) {
      std::fprintf(stderr, "axon-bench: %s\n", error.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "axon-bench: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "axon-bench: unknown error\n");
  }
  return 1;
}
