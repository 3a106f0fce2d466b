#include "src/tools/axon/play/replay_clock.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "src/base/cpu_relax.hpp"

namespace axon::tools {
namespace {

constexpr std::int64_t kNsPerSecond = 1'000'000'000;

timespec to_timespec(std::int64_t ns) noexcept {
  return timespec{.tv_sec = static_cast<time_t>(ns / kNsPerSecond), .tv_nsec = static_cast<long>(ns % kNsPerSecond)};
}

}  // namespace

std::int64_t monotonic_now_ns() noexcept {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * kNsPerSecond + now.tv_nsec;
}

std::int64_t ReplayClock::deadline_ns(std::uint64_t log_time_ns) const noexcept {
  if (log_time_ns <= base_log_time_ns_) {
    return base_ns_;
  }
  // In double: a gap of days at rate 0.1 still fits; the rounding (well under a ns for any gap a recording has)
  // does not accumulate, as each deadline is computed from the base afresh.
  const double gap_ns = static_cast<double>(log_time_ns - base_log_time_ns_) / rate_;
  return base_ns_ + static_cast<std::int64_t>(std::llround(gap_ns));
}

bool ReplayClock::wait_until(std::int64_t deadline_ns, const std::function<bool()>& interrupted) const {
  const std::int64_t far_until = deadline_ns - kSpinMarginNs;  // closer than this, nothing but the clock is read
  for (;;) {
    const std::int64_t now = monotonic_now_ns();
    if (now >= far_until) {
      break;
    }
    if (interrupted && interrupted()) {
      return false;
    }
    const std::int64_t slice_end = std::min(far_until, now + kSleepSliceNs);
    if (wait_ == ReplayWait::kSpin) {
      while (monotonic_now_ns() < slice_end) {
        cpu_relax();
      }
      continue;
    }
    const timespec until = to_timespec(slice_end);
    // EINTR (a signal) just goes round: the loop asks `interrupted` again.
    (void)::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr);
  }
  while (monotonic_now_ns() < deadline_ns) {
    cpu_relax();
  }
  return true;
}

}  // namespace axon::tools
