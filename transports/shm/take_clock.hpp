// The clock take() stamps latencies with: CLOCK_MONOTONIC nanoseconds, read
// from the CPU's time-stamp counter where it is invariant and scaled to the
// monotonic clock it is re-anchored to once a millisecond, so that a take
// costs an rdtsc (~7-14 ns) instead of a vDSO clock_gettime (~25-35 ns on a
// kvm-clock VM). Measured: docs/design/live-stats.md, "The clock at take()".
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace axon::shm {

/// Thread safety: one thread (the subscriber's taking thread). now_ns()
/// neither allocates nor locks; once a millisecond (and on every call for
/// the first kCalibrateNs, or always where the counter is not invariant) it
/// reads CLOCK_MONOTONIC through the vDSO, never a system call.
///
/// Accuracy: between anchors the counter is scaled by the rate measured
/// over the last ~0.1..1 s against CLOCK_MONOTONIC; over one millisecond an
/// error of that rate of 1e-6 (far more than measured) moves a stamp by 1 ns.
/// The counter is read unordered (rdtsc, no fence): right after take()'s
/// pop, whose result decides the branch that reaches it.
class TakeClock {
 public:
  /// Whether this CPU's time-stamp counter is invariant (constant rate, runs
  /// in every power state): CPUID 0x80000007 EDX bit 8. Computed once.
  static bool counter_usable() noexcept;

  /// CLOCK_MONOTONIC now, in nanoseconds.
  std::int64_t now_ns() noexcept {
#if defined(__x86_64__)
    const std::uint64_t ticks = __rdtsc() - anchor_tsc_;  // wraps huge if another core's counter is behind
    if (ticks < rebase_ticks_) [[likely]] {
      // ticks * rate < rebase_ticks_ * rate = kRebaseNs << 32 (2^52): no overflow.
      return anchor_ns_ + static_cast<std::int64_t>((ticks * ns_per_tick_q32_) >> 32);
    }
#endif
    return rebase();
  }

  /// Rate calibration needs this long between two anchors before the counter is used.
  static constexpr std::int64_t kCalibrateNs = 100'000'000;
  /// The counter is re-anchored to CLOCK_MONOTONIC this often.
  static constexpr std::int64_t kRebaseNs = 1'000'000;

 private:
  /// Reads CLOCK_MONOTONIC, re-anchors the counter to it and refreshes the rate.
  std::int64_t rebase() noexcept;

  std::uint64_t anchor_tsc_ = 0;
  std::int64_t anchor_ns_ = 0;
  /// Counter ticks after the anchor within which now_ns() extrapolates; 0
  /// while not calibrated (every call reads CLOCK_MONOTONIC).
  std::uint64_t rebase_ticks_ = 0;
  std::uint64_t ns_per_tick_q32_ = 0;  ///< Nanoseconds per tick, 32.32 fixed point.
  /// The rate's measuring anchor: the rate is (now - it) over at least
  /// kCalibrateNs; moved once a second so that it follows the clock's slew.
  std::uint64_t rate_tsc_ = 0;
  std::int64_t rate_ns_ = 0;
};

}  // namespace axon::shm
