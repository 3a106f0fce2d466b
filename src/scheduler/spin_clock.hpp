// SpinClock: the time a waiting loop (wait set, executor) looks at on each
// pass. A busy spin reads the clock only every kReadsEvery-th pass: where
// CLOCK_MONOTONIC has no vDSO path (a VM whose clock source is HPET or
// acpi_pm, as qemu's emulated guests are) each read is a system call that
// costs more than the whole pass, and only deadlines need the time.
#pragma once

#include <cstdint>

#include "axon/wait_strategy.hpp"
#include "src/base/clock.hpp"

namespace axon::detail {

/// Passes of a busy spin per clock read: a deadline is seen at most this
/// many passes late (microseconds; a pass is a look at the queues and one
/// poll of the transport).
inline constexpr std::uint32_t kSpinPassesPerClockRead = 64;

/// One per waiting loop; not thread-safe. Other strategies than busy spin
/// read the clock on every pass (their spin phase must end on time, and a
/// yield or a sleep costs more than a read anyway).
class SpinClock {
 public:
  explicit SpinClock(WaitStrategy strategy) noexcept
      : passes_per_read_(strategy.kind() == WaitStrategy::Kind::kBusySpin ? kSpinPassesPerClockRead : 1) {}

  /// The time of this pass: a fresh reading, or the last one while fewer
  /// than kSpinPassesPerClockRead passes went by since it.
  std::int64_t now() noexcept {
    if (passes_left_ == 0) {
      last_ns_ = monotonic_now_ns();
      passes_left_ = passes_per_read_;
    }
    --passes_left_;
    return last_ns_;
  }

  /// Work was done (a handler ran, time went by): the next pass reads the clock.
  void refresh() noexcept { passes_left_ = 0; }

 private:
  std::uint32_t passes_per_read_;
  std::uint32_t passes_left_ = 0;
  std::int64_t last_ns_ = 0;
};

}  // namespace axon::detail
