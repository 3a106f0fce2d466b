#include "chaos/chaos.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "chaos/chaos_analysis.hpp"
#include "chaos/chaos_deployment.hpp"
#include "chaos/chaos_runner.hpp"
#include "chaos/fault_schedule.hpp"
#include "chaos/host_faults.hpp"
#include "chaos/net_faults.hpp"
#include "harness/cli_options.hpp"
#include "results/html_report.hpp"
#include "results/json_input.hpp"
#include "results/table.hpp"
#include "scenario/scenario_config.hpp"
#include "tests/support/common/netns.hpp"
#include "tests/support/common/temp_dir.hpp"

namespace axon_bench {
namespace {

/// Faults end at least this long before the window does: restarts rejoin, queues drain.
constexpr double kSettleSeconds = 1.0;

struct ChaosOptions {
  std::string file;
  double duration_s = 0;           ///< 0: the file's.
  double warmup_s = -1;            ///< <0: the file's.
  double baseline_duration_s = 0;  ///< 0: the run's duration.
  std::optional<std::uint64_t> seed;
  double latency_slack_ms = 0;  ///< Added to the 2x latency bound (shared, loaded machines).
  bool check = false;
  CLI::App* root = nullptr;  ///< For --json and --report when a check fails (see run_chaos_command).
};

void print_schedule(std::FILE* out, const Scenario& s, const std::vector<Fault>& faults,
                    const std::optional<std::uint64_t>& seed) {
  std::fprintf(out, "fault schedule (%zu faults%s; times from the start of the measured window):\n", faults.size(),
               seed ? fmt::format(", random ones from seed {}", *seed).c_str() : "");
  std::fprintf(out, "faults:\n");
  for (const Fault& f : faults) {
    std::fprintf(out, "  - %s\n", f.yaml(s).c_str());
  }
}

void print_checks(std::FILE* out, const ChaosLog& log) {
  Table table({"check", "result", "figures", "bound"});
  for (const ChaosCheckEntry& c : log.checks) {
    table.add_row({c.name, c.pass ? "PASS" : "FAIL", c.figure, c.bound});
  }
  std::fprintf(out, "\nchaos checks:\n");
  table.print(out);
  std::size_t failed = 0;
  for (const ChaosCheckEntry& c : log.checks) {
    failed += c.pass ? 0 : 1;
  }
  std::fprintf(out, "%s: %zu of %zu checks passed\n", failed == 0 ? "PASS" : "FAIL", log.checks.size() - failed,
               log.checks.size());
}

/// The value of the root option `name` ("" when not given).
std::string root_option(CLI::App* root, const char* name) {
  const CLI::Option* option = root->get_option(name);
  return option->count() > 0 ? option->as<std::string>() : "";
}

void run_chaos_command(const ChaosOptions& options, Output& out) {
  Scenario scenario = load_scenario(options.file);
  if (options.duration_s > 0) {
    scenario.duration_s = options.duration_s;
  }
  if (options.warmup_s >= 0) {
    scenario.warmup_s = options.warmup_s;
  }
  FaultPlan faults = load_fault_plan(options.file, scenario);
  if (options.seed) {
    faults.random = faults.random.value_or(RandomFaults{});
    faults.random->seed = *options.seed;
  }
  const std::vector<Fault> schedule = schedule_of(faults, scenario, scenario.duration_s);
  const std::optional<std::uint64_t> seed =
      faults.random ? std::optional<std::uint64_t>(faults.random->seed) : std::nullopt;
  std::fprintf(out.text, "chaos: scenario '%s' (%s): %zu topics, %zu components, %.1f s measured after %.1f s\n",
               scenario.name.c_str(), scenario.file.c_str(), scenario.topics.size(), scenario.components.size(),
               scenario.duration_s, scenario.warmup_s);
  print_schedule(out.text, scenario, schedule, seed);
  if (const std::string error = check_schedule_fits(schedule, scenario.duration_s, kSettleSeconds); !error.empty()) {
    throw std::runtime_error(options.file + ": " + error);
  }
  for (const Fault& f : schedule) {
    std::string error;
    if (f.kind == FaultKind::kShmFull) {
      (void)shm_fill_bytes(shm_directory(), f.leave_mib, error);
    }
    if (!error.empty()) {
      throw std::runtime_error(options.file + ": " + error);
    }
  }
  if (options.check) {
    std::fprintf(out.text, "\n%s: valid\n", options.file.c_str());
    return;
  }

  // Components on virtual hosts: one network namespace (and /dev/shm) per host for both runs, UDP between them.
  std::optional<axon::test::VirtualHosts> hosts;
  std::unique_ptr<axon::test::TempDir> config_dir;
  std::string config_path;
  if (!scenario.hosts.empty()) {
    if (const std::string why = axon::test::VirtualHosts::unavailable_reason(); !why.empty()) {
      throw std::runtime_error(options.file +
                               ": its components run on virtual hosts (host:), which this process "
                               "cannot create: " +
                               why);
    }
    auto created = axon::test::VirtualHosts::create({.hosts = scenario.hosts.size()});
    if (!created) {
      throw std::runtime_error("virtual hosts: " + std::string(created.error().message()));
    }
    hosts.emplace(std::move(*created));
    const auto delayed = std::find_if(schedule.begin(), schedule.end(), [](const Fault& f) {
      return f.kind == FaultKind::kDelay || f.kind == FaultKind::kReorder;
    });
    if (const std::string why = delayed != schedule.end() ? nfqueue_unavailable_reason(*hosts) : ""; !why.empty()) {
      throw std::runtime_error(
          fmt::format("{}: faults: {}: delay and reorder faults need NFQUEUE in the virtual hosts: {}", options.file,
                      delayed->yaml(scenario), why));
    }
    std::vector<std::string> addresses;
    for (std::size_t k = 0; k < hosts->size(); ++k) {
      addresses.push_back(hosts->host(k).address);
      std::fprintf(out.text, "host %s: network namespace %s, %s\n", scenario.hosts[k].c_str(),
                   hosts->host(k).netns.c_str(), hosts->host(k).address.c_str());
    }
    config_dir = std::make_unique<axon::test::TempDir>("axon-bench-chaos");
    config_path = config_dir->write("deployment.yaml", chaos_deployment_yaml(scenario, addresses));
  }

  Scenario base = scenario;
  base.duration_s = options.baseline_duration_s > 0 ? options.baseline_duration_s : scenario.duration_s;
  ChaosPlan baseline_plan = make_chaos_plan(base, {}, domain_for_case(0));
  ChaosPlan chaos_plan = make_chaos_plan(scenario, schedule, domain_for_case(1));
  for (ChaosPlan* plan : {&baseline_plan, &chaos_plan}) {
    plan->hosts = hosts ? &*hosts : nullptr;
    plan->config_path = config_path;
  }
  ChaosShared baseline_shared(baseline_plan);
  ChaosShared chaos_shared(chaos_plan);
  std::fprintf(out.text, "\nfault-free baseline: %zu processes for %.1f s ...\n", base.components.size(),
               base.warmup_s + base.duration_s);
  std::fflush(out.text);
  const ChaosRunResult baseline = run_chaos(baseline_plan, baseline_shared, "chaos baseline");
  std::fprintf(out.text, "with faults: %zu processes for %.1f s ...\n", scenario.components.size(),
               scenario.warmup_s + scenario.duration_s);
  std::fflush(out.text);
  ChaosRunResult chaos = run_chaos(chaos_plan, chaos_shared, "chaos with faults");
  if (hosts) {
    // Both runs are over: the namespaces, their veths and rules, and the tmpfs mounts go; whatever stays is left.
    if (const std::string problems = hosts->destroy(); !problems.empty()) {
      chaos.net_left.push_back("virtual hosts: " + problems);
    }
    for (std::string& left : virtual_hosts_left(hosts->hosts())) {
      chaos.net_left.push_back(std::move(left));
    }
  }

  const RunView baseline_view{.plan = baseline_plan, .shared = baseline_shared, .result = baseline};
  const RunView chaos_view{.plan = chaos_plan, .shared = chaos_shared, .result = chaos};
  ChaosLog log = analyse_chaos(baseline_view, chaos_view, options.latency_slack_ms * 1e6);
  log.seed = seed;
  for (const ChaosFaultEntry& f : log.faults) {
    std::fprintf(out.text, "fault %s: began %.3f s, ended %.3f s%s\n", f.yaml.c_str(), f.begun_s, f.ended_s,
                 f.note.empty() ? "" : ("; " + f.note).c_str());
  }
  print_checks(out.text, log);
  out.log.run.notes.push_back(
      fmt::format("chaos: '{}' run fault-free for {} s, then with {} faults for {} s; every component an "
                  "axon::SingleThreadedExecutor with WaitStrategy::blocking(); payloads carry a sequence number and "
                  "a checksum of every byte",
                  scenario.name, base.duration_s, schedule.size(), scenario.duration_s));
  out.record(chaos_case_results(baseline_view, "fault-free"), chaos_case_results(chaos_view, "faults"));
  const bool passed = log.passed();
  out.log.chaos = std::move(log);
  if (passed) {
    return;
  }
  // main writes --json and --report only after a command that returns: write them here, then fail.
  const std::string json_path = root_option(options.root, "--json");
  const std::string report_path = root_option(options.root, "--report");
  if (!json_path.empty()) {
    if (const std::string error = write_json(out.log, json_path); !error.empty()) {
      std::fprintf(stderr, "axon-bench: %s\n", error.c_str());
    }
  }
  if (!report_path.empty()) {
    const std::string name = json_path.empty() || json_path == "-" ? "this run" : json_path;
    const std::vector<ReportInput> inputs{{name, parse_results_json(to_json(out.log), name)}};
    if (const std::string error = write_html_report(inputs, report_path); !error.empty()) {
      std::fprintf(stderr, "axon-bench: %s\n", error.c_str());
    }
  }
  throw std::runtime_error("chaos: a check failed (see the table above; seed and schedule above replay the run)");
}

}  // namespace

Command add_chaos_command(CLI::App& app) {
  auto options = std::make_shared<ChaosOptions>();
  options->root = &app;
  CLI::App* cmd = add_measuring_command(app, "chaos");
  cmd->add_option("file", options->file, "The scenario file (YAML) with its fault schedule (faults:, random:)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--duration", options->duration_s,
                  "Seconds measured in the run with faults (default: the file's duration_s, else 60)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", options->warmup_s, "Seconds run first and not counted (default: the file's warmup_s)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--baseline-duration", options->baseline_duration_s,
                  "Seconds measured in the fault-free baseline (default: as the run with faults)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", options->seed,
                  "Draw random faults from this seed (the file's random: count and kinds, else 5 of kill, stop, "
                  "burst); replaces the file's random seed");
  cmd->add_option("--latency-slack-ms", options->latency_slack_ms,
                  "Milliseconds added to the latency bound (2x the fault-free p99): for a machine other work loads, "
                  "where two fault-free runs already differ by more than 2x (default 0: the bound alone)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--check", options->check, "Only read and check the file and print the fault schedule; run nothing");
  cmd->description(
      "Run a scenario file fault-free and then with its fault schedule (kill and restart, stop and continue, "
      "publish bursts, CPU hogs, memory pressure, a full shm directory; for components on virtual hosts (host:, needs "
      "root) packet loss, delay, reordering and partitions; fixed or drawn from a seed), and check "
      "that reliable topics lose, duplicate and reorder nothing, payloads arrive intact, every pool's chunks go "
      "back to free, topics no fault touched keep their p99 latency (within 2x of the baseline), liveliness and "
      "deadline handlers fire for exactly the faulted components, and nothing is left behind. Exits 1 when a "
      "check fails. Format and checks: docs/reliability.md.");
  return {cmd, [options](Output& out) { run_chaos_command(*options, out); }};
}

}  // namespace axon_bench
