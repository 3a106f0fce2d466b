// How a benchmark process waits while nothing is ready, always in the
// library's own terms: an axon::WaitStrategy. An executor or a wait set
// carries the strategy out itself (its sleep is on the subscribers' futex
// words, so a publish wakes it). The benchmarks' own loops around take()
// carry it out with PollingIdle: spin, yield, then a timed sleep of
// `sleep_us`, since a loop that polls has no word to sleep on (axon's own
// idler sleeps a fixed time for such subscriptions too). Busy-polling more
// processes than there are CPUs only measures the scheduler.
#pragma once

#include <sched.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>

#include "harness/system.hpp"
#include <axon/wait_strategy.hpp>

namespace axon_bench {

/// A strategy and who carries it out.
struct BenchWait {
  axon::WaitStrategy strategy = axon::WaitStrategy::busy_spin();
  /// true: an axon executor or wait set; false: the benchmark's loop polling take().
  bool executor = false;
  /// A polling loop's sleep once spinning and yielding are over, in microseconds.
  std::uint32_t sleep_us = 100;

  /// The wait_strategy of the results. Polling: "busy-poll", "yield",
  /// "sleep-100us"; an executor: "busy-spin", "blocking",
  /// "spin-yield-sleep-10us-100us" (the budgets in whole microseconds).
  [[nodiscard]] std::string name() const;
};

/// What the polling "yield" stands for: sched_yield() at every idle turn,
/// never sleeping.
inline constexpr axon::WaitStrategy kYieldForever =
    axon::WaitStrategy::spin_yield_sleep(0, std::numeric_limits<std::int64_t>::max());

/// Parses a polling loop's "busy-poll", "yield" or "sleep" (sleeping
/// `sleep_us`), or an executor's "busy-spin", "spin-yield-sleep" (with
/// budgets `spin_ns`, `yield_ns`) or "blocking". Throws
/// std::invalid_argument.
BenchWait parse_wait(const std::string& text, std::uint32_t sleep_us = 100,
                     std::int64_t spin_ns = axon::WaitStrategy::spin_yield_sleep().spin_ns(),
                     std::int64_t yield_ns = axon::WaitStrategy::spin_yield_sleep().yield_ns());

/// The wait_strategy name of an executor's strategy (BenchWait::name()).
std::string executor_wait_name(const axon::WaitStrategy& wait);

/// Carries out a polling wait: one idle() per turn that found nothing.
/// One per loop; does not allocate.
class PollingIdle {
 public:
  explicit PollingIdle(const BenchWait& wait) noexcept : wait_(wait.strategy), sleep_us_(wait.sleep_us) {}

  /// Work was found: the next idle period starts with spinning again.
  void found() noexcept { idle_since_ns_ = -1; }

  /// One idle turn: spin, yield or sleep, as far as the strategy has come.
  void idle() noexcept {
    using Kind = axon::WaitStrategy::Kind;
    if (wait_.kind() == Kind::kBusySpin) {
      cpu_relax();
      return;
    }
    if (wait_.kind() == Kind::kSpinYieldSleep) {
      const std::int64_t now = now_ns();
      if (idle_since_ns_ < 0) {
        idle_since_ns_ = now;
      }
      const std::int64_t idle_ns = now - idle_since_ns_;
      if (idle_ns < wait_.spin_ns()) {
        cpu_relax();
        return;
      }
      if (idle_ns - wait_.spin_ns() < wait_.yield_ns()) {  // no overflow with kYieldForever
        ::sched_yield();
        return;
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
  }

 private:
  axon::WaitStrategy wait_;
  std::uint32_t sleep_us_;
  std::int64_t idle_since_ns_ = -1;
};

}  // namespace axon_bench
