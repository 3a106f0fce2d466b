// When each replayed message is due, and waiting for it without drift (docs/design/replay.md, "Clock"): every
// deadline is absolute, computed from one base (a CLOCK_MONOTONIC time and the log time due then) and the rate,
//     deadline_i = base_ns + (log_time_i - base_log_time) / rate,
// so an error never carries over to the next message. The wait sleeps with clock_nanosleep(TIMER_ABSTIME) until
// kSpinMargin before the deadline (in slices, so that keys and Ctrl-C are noticed) and spins on the clock for the
// rest: a sleep alone wakes up tens of microseconds late, a spin alone would hold a core for the whole gap. Where a
// sleeping thread's timer wakes it up milliseconds late (an idle vCPU of a VM: docs/design/replay.md, "Clock"),
// ReplayWait::kSpin spins for the whole gap instead, asking `interrupted` every slice while far from the deadline.
#pragma once

#include <cstdint>
#include <functional>

namespace axon::tools {

/// CLOCK_MONOTONIC now, in ns.
[[nodiscard]] std::int64_t monotonic_now_ns() noexcept;

/// How the replay waits between messages (`axon play --spin`).
enum class ReplayWait : std::uint8_t {
  kSleepThenSpin,  ///< Sleeps until kSpinMarginNs before each deadline, spins the rest: a core only near deadlines.
  kSpin,           ///< Spins on the clock for the whole gap: one core busy for the replay, no timer wake-ups.
};

/// Thread safety: none (the replay's one thread).
class ReplayClock {
 public:
  /// How long before a deadline the wait stops sleeping and spins.
  static constexpr std::int64_t kSpinMarginNs = 300'000;
  /// The longest single sleep: how soon `interrupted` is asked again.
  static constexpr std::int64_t kSleepSliceNs = 50'000'000;

  /// `rate` > 0: 1 plays at the recorded speed.
  explicit ReplayClock(double rate, ReplayWait wait = ReplayWait::kSleepThenSpin) noexcept : rate_(rate), wait_(wait) {}

  /// From now on, the message logged at `log_time_ns` is due at `now_ns` (a start, a resume, a loop).
  void rebase(std::int64_t now_ns, std::uint64_t log_time_ns) noexcept {
    base_ns_ = now_ns;
    base_log_time_ns_ = log_time_ns;
  }
  [[nodiscard]] std::int64_t base_ns() const noexcept { return base_ns_; }
  /// When the message logged at `log_time_ns` is due (CLOCK_MONOTONIC ns). Log times before the base are due
  /// at once (the base).
  [[nodiscard]] std::int64_t deadline_ns(std::uint64_t log_time_ns) const noexcept;

  /// Waits until `deadline_ns`, as this clock's ReplayWait says: true when it came, false when `interrupted()`
  /// (asked every kSleepSliceNs while more than kSpinMarginNs are left, never closer) said to stop waiting.
  [[nodiscard]] bool wait_until(std::int64_t deadline_ns, const std::function<bool()>& interrupted) const;

 private:
  double rate_;
  ReplayWait wait_;
  std::int64_t base_ns_ = 0;
  std::uint64_t base_log_time_ns_ = 0;
};

}  // namespace axon::tools
