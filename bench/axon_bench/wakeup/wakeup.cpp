#include "wakeup/wakeup.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline/baselines.hpp"
#include "harness/cli_options.hpp"
#include "harness/payload.hpp"
#include "harness/progress.hpp"
#include "harness/wait.hpp"
#include "results/table.hpp"
#include "wakeup/wakeup_cases.hpp"
#include "wakeup/wakeup_report.hpp"

namespace axon_bench {
namespace {

struct WakeupOptions {
  std::vector<int> cpus;
  std::vector<std::uint64_t> sizes = {64, 2048};
  std::string mode = "both";
  double rate_hz = 10'000;
  std::vector<double> gap_us = {50, 200};
  std::vector<double> budget_us = {120, 0};  ///< The configurable spin-yield-sleep case: spin, yield.
  std::uint64_t samples = 20'000;
  std::uint64_t warmup = 0;
  bool warmup_given = false;
  std::uint64_t raw_samples = 20'000;
  double idle_s = 5;
};

/// Busy-spin first: the others' ratios refer to it.
std::vector<axon::WaitStrategy> strategies(const WakeupOptions& options) {
  return {axon::WaitStrategy::busy_spin(), axon::WaitStrategy::spin_yield_sleep(),
          axon::WaitStrategy::spin_yield_sleep(std::llround(options.budget_us[0] * 1000),
                                               std::llround(options.budget_us[1] * 1000)),
          axon::WaitStrategy::blocking()};
}

void check(const WakeupOptions& options) {
  for (const auto bytes : options.sizes) {
    require_payload_size(bytes, "--sizes");
  }
  if (options.gap_us[0] < 0 || options.gap_us[1] < options.gap_us[0]) {
    throw std::invalid_argument("--gap-us MIN,MAX: 0 <= MIN <= MAX");
  }
  if (options.budget_us[0] < 0 || options.budget_us[1] < 0) {
    throw std::invalid_argument("--budget-us SPIN,YIELD: both >= 0");
  }
}

/// The latency cases of one pattern, each strategy per size, with ratios.
std::vector<CaseResult> run_pattern(const WakeupOptions& options, WakeupPattern pattern, const std::vector<int>& cpus,
                                    const CaseResult& futex, const CaseResult& raw, std::size_t& index) {
  std::vector<CaseResult> results;
  for (const auto bytes : options.sizes) {
    double busy_p50 = 0;
    for (const auto& wait : strategies(options)) {
      WakeupCase c;
      c.pattern = pattern;
      c.payload_bytes = bytes;
      c.wait = wait;
      c.rate_hz = options.rate_hz;
      c.gap_min_ns = std::llround(options.gap_us[0] * 1000);
      c.gap_max_ns = std::llround(options.gap_us[1] * 1000);
      c.samples = options.samples;
      c.warmup = options.warmup_given ? options.warmup : std::min<std::uint64_t>(options.samples / 10 + 10, 2'000);
      c.cpus = cpus;
      c.domain_id = domain_for_case(index++);
      CaseResult r = run_wakeup_case(c);
      const double p50 = r.latency.p50_ns;
      if (wait.kind() == axon::WaitStrategy::Kind::kBusySpin) {
        busy_p50 = p50;
      }
      r.ratio_to_busy_spin_p50 = busy_p50 > 0 ? p50 / busy_p50 : 0.0;
      r.ratio_to_futex_p50 = futex.latency.p50_ns > 0 ? p50 / futex.latency.p50_ns : 0.0;
      r.ratio_to_raw_p50 = raw.latency.p50_ns > 0 ? p50 / raw.latency.p50_ns : 0.0;
      if (!quiet()) {
        std::fprintf(stderr, "  %s %s %s: p50 %.3f us (%.2fx busy-spin, %.2fx futex)\n",
                     pattern == WakeupPattern::kGap ? "gap" : "rate", format_bytes(bytes).c_str(),
                     r.wait_strategy.c_str(), p50 / 1000, *r.ratio_to_busy_spin_p50, *r.ratio_to_futex_p50);
      }
      results.push_back(r);
    }
  }
  return results;
}

void run_wakeup_command(const WakeupOptions& options, Output& out) {
  check(options);
  const std::vector<int> cpus = choose_cpu_pair(options.cpus);
  out.log.run.cpus = cpus;
  const PingPongSetup setup{.cpus = cpus, .samples = options.raw_samples, .warmup = options.raw_samples / 10};
  std::fprintf(out.text, "raw cache-line and futex ping-pong on CPUs %d and %d (the same-run baselines)\n", cpus[0],
               cpus[1]);
  CaseResult raw = measure_cacheline_pingpong(setup);
  raw.ratio_to_raw_p50 = 1.0;
  CaseResult futex = measure_futex_pingpong(setup);
  futex.ratio_to_raw_p50 = raw.latency.p50_ns > 0 ? futex.latency.p50_ns / raw.latency.p50_ns : 0.0;
  futex.ratio_to_futex_p50 = 1.0;
  std::fprintf(out.text, "  cache line one-way p50 %.3f us; futex one-way p50 %.3f us, p99 %.3f us\n",
               raw.latency.p50_ns / 1000, futex.latency.p50_ns / 1000, futex.latency.p99_ns / 1000);

  std::vector<CaseResult> results{raw, futex};
  std::size_t index = 0;
  if (options.mode == "gap" || options.mode == "both") {
    const auto gap = run_pattern(options, WakeupPattern::kGap, cpus, futex, raw, index);
    results.insert(results.end(), gap.begin(), gap.end());
  }
  if (options.mode == "rate" || options.mode == "both") {
    const auto rate = run_pattern(options, WakeupPattern::kRate, cpus, futex, raw, index);
    results.insert(results.end(), rate.begin(), rate.end());
  }
  if (options.idle_s > 0) {
    results.push_back(run_idle_case(
        IdleCase{.seconds = options.idle_s, .node_only = true, .cpus = cpus, .domain_id = domain_for_case(index++)}));
    for (const auto& wait : strategies(options)) {
      results.push_back(run_idle_case(
          IdleCase{.wait = wait, .seconds = options.idle_s, .cpus = cpus, .domain_id = domain_for_case(index++)}));
    }
  }
  out.log.run.notes.push_back(format(
      "wakeup gap: one message in flight; after the callback acknowledged the previous one the publisher busy-waits "
      "a random %.0f-%.0f us, then publishes; latency = callback entry - publish_time_ns",
      options.gap_us[0], options.gap_us[1]));
  out.log.run.notes.push_back(
      "wakeup rate: latency = callback entry - the scheduled send time (no coordinated omission)");

  std::fprintf(out.text, "\n");
  print_wakeup_table(out.text, results);
  if (options.idle_s > 0) {
    std::fprintf(out.text, "\n");
    print_idle_table(out.text, results, options.idle_s);
  }
  std::fprintf(out.text, "\n");
  print_wakeup_targets(out.text, results, futex, WakeupTargets{});
  out.record(results);
}

}  // namespace

Command add_wakeup_command(CLI::App& app) {
  auto options = std::make_shared<WakeupOptions>();
  CLI::App* cmd = add_measuring_command(app, "wakeup");
  add_cpu_pair_option(*cmd, options->cpus,
                      "The two CPUs: publisher, subscriber (default: 0,1 when the host has 2+ CPUs, else not pinned)");
  add_size_list_option(*cmd, "--sizes", options->sizes, "Payload sizes, powers of two from 16 B to 16 MiB (64,2KiB)");
  add_checked_option(*cmd, "--mode", options->mode,
                     "gap: one message in flight, sent a random --gap-us after the previous one was handled (a "
                     "blocking subscriber is asleep when it comes); rate: a fixed --rate; both; idle: only the idle "
                     "CPU cases",
                     CLI::IsMember({"gap", "rate", "both", "idle"}));
  add_checked_option(*cmd, "--rate", options->rate_hz, "Messages per second of the rate pattern", CLI::PositiveNumber);
  cmd->add_option("--gap-us", options->gap_us, "MIN,MAX: the gap pattern's pause, uniform, in microseconds")
      ->delimiter(',')
      ->expected(2)
      ->capture_default_str();
  cmd->add_option("--budget-us", options->budget_us,
                  "SPIN,YIELD: the budgets of the second spin-yield-sleep case, in microseconds (the first uses the "
                  "library's defaults, 10,100)")
      ->delimiter(',')
      ->expected(2)
      ->capture_default_str();
  add_checked_option(*cmd, "--samples", options->samples, "Messages recorded per case", CLI::PositiveNumber);
  auto* warmup = cmd->add_option("--warmup", options->warmup,
                                 "Messages sent first in each case (default: samples / 10 + 10, "
                                 "at most 2000)");
  add_checked_option(*cmd, "--raw-samples", options->raw_samples,
                     "Round trips of each raw ping-pong (cache line, futex)", CLI::PositiveNumber);
  add_checked_option(*cmd, "--idle-seconds", options->idle_s,
                     "How long each idle subscriber waits with nothing published (0: skip the idle cases)",
                     CLI::NonNegativeNumber);
  cmd->description(
      "Wake-up latency of a subscriber whose SingleThreadedExecutor runs a callback per message, for each wait "
      "strategy (busy-spin, spin-yield-sleep with the default and with --budget-us budgets, blocking), between two "
      "processes pinned to two CPUs, next to busy-spin and to a raw futex ping-pong measured first in the same run; "
      "then the CPU use of an idle subscriber with each strategy.");
  return {cmd, [options, warmup](Output& out) {
            options->warmup_given = warmup->count() > 0;
            run_wakeup_command(*options, out);
          }};
}

}  // namespace axon_bench
