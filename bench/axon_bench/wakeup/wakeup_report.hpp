// The text output of `axon-bench wakeup`: the latency table with ratios to
// busy-spin and to the raw futex ping-pong, the idle CPU table, and one line
// per target of the scheduler issue saying whether it was met in this run.
#pragma once

#include <cstdio>
#include <span>

#include "results/result_log.hpp"

namespace axon_bench {

/// The two targets, as ratios of medians measured in one run.
struct WakeupTargets {
  double blocking_vs_futex = 2.0;   ///< Blocking, one message after a gap: p50 <= this x futex one-way p50.
  double spin_sleep_vs_busy = 1.2;  ///< Default spin-yield-sleep at the rate: p50 <= this x busy-spin p50.
  double target_rate_hz = 10'000;   ///< The rate the second target names.
};

/// Latency cases (records of benchmark "wakeup" with latencies) as a table.
void print_wakeup_table(std::FILE* out, std::span<const CaseResult> cases);

/// Idle records (pattern "idle"): CPU % and CPU time of each process.
void print_idle_table(std::FILE* out, std::span<const CaseResult> cases, double seconds);

/// "target ...: met / NOT met" lines, from the ratios already set on `cases`.
void print_wakeup_targets(std::FILE* out, std::span<const CaseResult> cases, const CaseResult& futex,
                          const WakeupTargets& targets);

}  // namespace axon_bench
