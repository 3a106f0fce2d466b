// The pace of the commands that look again and again (`axon monitor`, `axon topic delay`): their --interval,
// --duration and --count, and the loop that looks until one of them, or Ctrl-C (StopOnSignals, topic/watch.hpp),
// says stop.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <thread>

#include "axon/result.hpp"
#include "src/base/clock.hpp"
#include "src/tools/axon/topic/watch.hpp"

namespace axon::tools {

struct RoundOptions {
  double interval_s = 1.0;  ///< Between the starts of two looks.
  double duration_s = 0;    ///< > 0: no look starts this long after the first.
  std::uint64_t count = 0;  ///< > 0: at most this many looks.

  /// Adds --interval, --duration and --count to `command`, bound to this.
  void add_to(CLI::App& command) {
    command.add_option("--interval", interval_s, "Seconds between two looks")->check(CLI::Range(0.05, 3600.0));
    command.add_option("--duration", duration_s, "Stop after this many seconds (default: until Ctrl-C)")
        ->check(CLI::Range(0.0, 1e9));
    command.add_option("--count", count, "Stop after this many looks")->check(CLI::Range(1, 1'000'000'000));
  }

  /// Calls `look(start_ns)` at once, then every interval, until --count looks, --duration or Ctrl-C (which a
  /// StopOnSignals of the caller catches); the first error a look returns ends it and is returned. `idle` (when
  /// set) runs every 50 ms or so between looks (the monitor reads keys there); false from it stops like Ctrl-C.
  Result<void> run(const std::function<Result<void>(std::int64_t start_ns)>& look,
                   const std::function<bool()>& idle = {}) const {
    const std::int64_t start_ns = monotonic_now_ns();
    const std::int64_t end_ns = duration_s > 0 ? start_ns + static_cast<std::int64_t>(duration_s * 1e9)
                                               : std::numeric_limits<std::int64_t>::max();
    std::int64_t next_ns = start_ns;
    for (std::uint64_t n = 0; !StopOnSignals::requested() && (count == 0 || n < count); ++n) {
      if (n > 0 && !sleep_until(next_ns, end_ns, idle)) {
        break;
      }
      if (auto looked = look(start_ns); !looked) {
        return looked.error();
      }
      next_ns += static_cast<std::int64_t>(interval_s * 1e9);
    }
    return {};
  }

 private:
  /// Sleeps until `deadline_ns` in steps of at most 50 ms, so that Ctrl-C ends it soon; false when `end_ns` came
  /// first, Ctrl-C did (StopOnSignals::requested()) or `idle` said stop.
  [[nodiscard]] static bool sleep_until(std::int64_t deadline_ns, std::int64_t end_ns,
                                        const std::function<bool()>& idle) {
    for (;;) {
      const std::int64_t now_ns = monotonic_now_ns();
      if (StopOnSignals::requested() || now_ns >= end_ns || (idle && !idle())) {
        return false;
      }
      if (now_ns >= deadline_ns) {
        return true;
      }
      const std::int64_t step_ns = std::min({deadline_ns, end_ns, now_ns + std::int64_t{50'000'000}}) - now_ns;
      std::this_thread::sleep_for(std::chrono::nanoseconds(step_ns));
    }
  }
};

}  // namespace axon::tools
