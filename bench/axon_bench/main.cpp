// axon-bench: process-to-process figures of axon next to the same machine's
// baselines. Each subcommand lives in its own file and registers its options
// here; main parses the whole command line, then runs the chosen command,
// which appends its results to one ResultLog that the output options write.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "baseline/baselines.hpp"
#include "chaos/chaos.hpp"
#include "domain/domain_commands.hpp"
#include "harness/command.hpp"
#include "harness/progress.hpp"
#include "latency/latency.hpp"
#include "network/network.hpp"
#include "rdma/rdma.hpp"
#include "report/report_command.hpp"
#include "results/html_report.hpp"
#include "results/json_input.hpp"
#include "results/result_log.hpp"
#include "scenario/scenario.hpp"
#include "soak/soak.hpp"
#include "throughput/throughput.hpp"
#include "wakeup/wakeup.hpp"

namespace {

int run(int argc, char** argv) {
  CLI::App app{
      "axon-bench: latency, wake-up, throughput and scenario figures of axon between processes, next to this "
      "machine's baselines.\n"
      "Run `axon-bench <command> --help` for the options of a command."};
  app.require_subcommand(1);
  app.fallthrough();  // the options below may also follow the subcommand

  std::string json_path;
  app.add_option("--json", json_path,
                 "Also write every result with the machine, git revision, date and command line as JSON to FILE "
                 "('-' for stdout; the tables then go to stderr)")
      ->type_name("FILE");

  std::string report_path;
  app.add_option("--report", report_path,
                 "Also write the results as a self-contained HTML page to FILE: tables, and a latency histogram and "
                 "CDF per case (inline SVG; `axon-bench report` compares two JSON files)")
      ->type_name("FILE.html");
  bool quiet = false;
  app.add_flag("--quiet,-q", quiet, "No progress line and no per-case lines on stderr (tables and errors still print)");
  const std::vector<axon_bench::Command> commands = {
      axon_bench::add_baseline_command(app),   axon_bench::add_latency_command(app),
      axon_bench::add_throughput_command(app), axon_bench::add_scenario_command(app),
      axon_bench::add_wakeup_command(app),     axon_bench::add_network_command(app),
      axon_bench::add_rdma_command(app),       axon_bench::add_idle_command(app),
      axon_bench::add_discovery_command(app),  axon_bench::add_soak_command(app),
      axon_bench::add_chaos_command(app),
      axon_bench::add_report_command(app),  // report stays last
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  axon_bench::set_progress_wanted(!quiet);
  axon_bench::Output out;
  out.log.run = axon_bench::RunInfo::collect(argc, argv);
  if (json_path == "-") {
    out.text = stderr;
  }
  const CLI::App* report_command = commands.back().app;
  if (report_command->parsed() && (!json_path.empty() || !report_path.empty())) {
    std::fprintf(stderr, "axon-bench: --json and --report do not apply to `report` (use -o FILE.html)\n");
    return 2;
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
  if (!report_path.empty()) {
    // Through the JSON text, so a page made now and one made later with
    // `axon-bench report` from the JSON file are the same.
    const std::string name = json_path.empty() || json_path == "-" ? "this run" : json_path;
    std::vector<axon_bench::ReportInput> inputs{
        {name, axon_bench::parse_results_json(axon_bench::to_json(out.log), name)}};
    if (const std::string error = axon_bench::write_html_report(inputs, report_path); !error.empty()) {
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
