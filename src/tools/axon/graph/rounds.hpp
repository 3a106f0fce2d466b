// The pace of the commands that look again and again (`axon monitor`, `axon topic delay`): the next look's time,
// the end set by --duration, and Ctrl-C (StopOnSignals, topic/watch.hpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <thread>

#include "src/base/clock.hpp"
#include "src/tools/axon/topic/watch.hpp"

namespace axon::tools {

/// When a command started at `start_ns` with `--duration duration_s` ends (0: never).
[[nodiscard]] inline std::int64_t end_of(std::int64_t start_ns, double duration_s) noexcept {
  return duration_s > 0 ? start_ns + static_cast<std::int64_t>(duration_s * 1e9)
                        : std::numeric_limits<std::int64_t>::max();
}

/// Sleeps until `deadline_ns` in steps of at most 50 ms, so that Ctrl-C ends it soon; false when `end_ns` came
/// first or Ctrl-C did (StopOnSignals::requested()).
[[nodiscard]] inline bool sleep_until(std::int64_t deadline_ns, std::int64_t end_ns) {
  for (;;) {
    const std::int64_t now_ns = monotonic_now_ns();
    if (StopOnSignals::requested() || now_ns >= end_ns) {
      return false;
    }
    if (now_ns >= deadline_ns) {
      return true;
    }
    const std::int64_t step_ns = std::min({deadline_ns, end_ns, now_ns + std::int64_t{50'000'000}}) - now_ns;
    std::this_thread::sleep_for(std::chrono::nanoseconds(step_ns));
  }
}

}  // namespace axon::tools
