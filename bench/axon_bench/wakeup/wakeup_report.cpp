#include "wakeup/wakeup_report.hpp"

#include <string>
#include <vector>

#include "harness/wait.hpp"
#include "results/table.hpp"

namespace axon_bench {
namespace {

std::string ratio_text(const std::optional<double>& ratio) { return ratio ? format("%.2f", *ratio) : "-"; }

std::string pattern_text(const CaseResult& c) { return c.rate_hz > 0 ? format("%.0f Hz", c.rate_hz) : "gap"; }

const char* verdict(bool met) { return met ? "met" : "NOT met"; }

}  // namespace

void print_wakeup_table(std::FILE* out, std::span<const CaseResult> cases) {
  Table table({"pattern", "payload", "wait strategy", "samples", "p50", "p90", "p99", "p99.9", "max", "x busy-spin",
               "x futex", "cpu% pub/sub", "dropped"});
  for (const auto& c : cases) {
    if (c.benchmark != "wakeup" || !c.has_latency) {
      continue;
    }
    const auto& l = c.latency;
    table.add_row({pattern_text(c), format_bytes(c.payload_bytes), c.wait_strategy, std::to_string(l.samples),
                   format_us(l.p50_ns), format_us(l.p90_ns), format_us(l.p99_ns), format_us(l.p999_ns),
                   format_us(l.max_ns), ratio_text(c.ratio_to_busy_spin_p50), ratio_text(c.ratio_to_futex_p50),
                   format("%.0f/%.0f", c.cpu_percent_sender.value_or(0), c.cpu_percent_receiver.value_or(0)),
                   std::to_string(c.dropped)});
  }
  std::fprintf(out,
               "wake-up latency in microseconds: the subscriber's executor callback entry - publish_time_ns (gap: "
               "one message in flight after a random gap) or - the scheduled send time (rate); x busy-spin / x "
               "futex = p50 / the same run's busy-spin p50 (same payload and pattern) / raw futex one-way p50\n");
  table.print(out);
}

void print_idle_table(std::FILE* out, std::span<const CaseResult> cases, double seconds) {
  Table table({"wait strategy", "subscriber cpu%", "subscriber cpu ms", "publisher cpu%", "messages"});
  for (const auto& c : cases) {
    if (c.benchmark != "wakeup" || c.mode != "idle") {
      continue;
    }
    const double sub = c.cpu_percent_receiver.value_or(0);
    table.add_row({c.wait_strategy, format("%.3f", sub), format("%.1f", sub / 100 * seconds * 1000),
                   format("%.3f", c.cpu_percent_sender.value_or(0)), std::to_string(c.dropped)});
  }
  std::fprintf(out,
               "idle subscriber: its executor spins %.1f s with nothing published (publisher connected); CPU = "
               "user + system of all its threads (the node's service thread too), 100 = one core; none = no "
               "executor, the thread sleeps (the node's service thread alone)\n",
               seconds);
  table.print(out);
}

void print_wakeup_targets(std::FILE* out, std::span<const CaseResult> cases, const CaseResult& futex,
                          const WakeupTargets& targets) {
  const std::string default_spin_sleep = executor_wait_name(axon::WaitStrategy::spin_yield_sleep());
  std::fprintf(out, "raw futex ping-pong, one way (round trip / 2) in this run: p50 %.3f us\n",
               futex.latency.p50_ns / 1000);
  bool any = false;
  for (const auto& c : cases) {
    if (c.benchmark != "wakeup" || !c.has_latency) {
      continue;
    }
    if (c.wait_strategy == "blocking" && c.rate_hz == 0 && c.ratio_to_futex_p50) {
      any = true;
      std::fprintf(out,
                   "target: blocking wake-up p50 within %.1fx the raw futex one-way p50: %s: %.3f us = %.2fx -> %s\n",
                   targets.blocking_vs_futex, format_bytes(c.payload_bytes).c_str(), c.latency.p50_ns / 1000,
                   *c.ratio_to_futex_p50, verdict(*c.ratio_to_futex_p50 <= targets.blocking_vs_futex));
    }
    if (c.wait_strategy == default_spin_sleep && c.rate_hz > 0 && c.ratio_to_busy_spin_p50) {
      any = true;
      std::fprintf(out, "target: %s p50 within %.1fx busy-spin at %.0f Hz%s: %s: %.3f us = %.2fx -> %s\n",
                   c.wait_strategy.c_str(), targets.spin_sleep_vs_busy, c.rate_hz,
                   c.rate_hz == targets.target_rate_hz
                       ? ""
                       : format(" (the target names %.0f Hz)", targets.target_rate_hz).c_str(),
                   format_bytes(c.payload_bytes).c_str(), c.latency.p50_ns / 1000, *c.ratio_to_busy_spin_p50,
                   verdict(*c.ratio_to_busy_spin_p50 <= targets.spin_sleep_vs_busy));
    }
  }
  if (!any) {
    std::fprintf(out,
                 "targets: not measured (they need the blocking gap cases and the default spin-yield-sleep "
                 "and busy-spin rate cases)\n");
  }
}

}  // namespace axon_bench
