// What a polling subscriber does when take() finds nothing: spin, give the
// CPU to another runnable process, or sleep. (axon's own waits, an executor
// or wait set with an axon::WaitStrategy, are in executor_wait.hpp.)
// Busy-polling more processes than there are CPUs only measures the
// scheduler.
#pragma once

#include <sched.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "harness/system.hpp"

namespace axon_bench {

enum class WaitStrategy {
  kBusyPoll,  ///< cpu_relax() and poll again: lowest latency, one core per waiter.
  kYield,     ///< sched_yield(): lets other processes of this CPU run.
  kSleep,     ///< Sleep `sleep_us` (default 100 µs): leaves the CPU to others; adds up to that much latency.
};

struct WaitPolicy {
  WaitStrategy strategy = WaitStrategy::kBusyPoll;
  std::uint32_t sleep_us = 100;

  /// "busy-poll", "yield", "sleep-100us": the wait_strategy of the results.
  [[nodiscard]] std::string name() const {
    switch (strategy) {
      case WaitStrategy::kBusyPoll: return "busy-poll";
      case WaitStrategy::kYield: return "yield";
      case WaitStrategy::kSleep: return "sleep-" + std::to_string(sleep_us) + "us";
    }
    return "?";
  }

  /// One idle turn of a polling loop.
  void idle() const noexcept {
    switch (strategy) {
      case WaitStrategy::kBusyPoll: cpu_relax(); break;
      case WaitStrategy::kYield: ::sched_yield(); break;
      case WaitStrategy::kSleep: std::this_thread::sleep_for(std::chrono::microseconds(sleep_us)); break;
    }
  }
};

/// Parses "busy-poll", "yield" or "sleep"; throws std::invalid_argument.
inline WaitStrategy parse_wait_strategy(const std::string& text) {
  if (text == "busy-poll") {
    return WaitStrategy::kBusyPoll;
  }
  if (text == "yield") {
    return WaitStrategy::kYield;
  }
  if (text == "sleep") {
    return WaitStrategy::kSleep;
  }
  throw std::invalid_argument("wait strategy '" + text + "': use busy-poll, yield or sleep");
}

}  // namespace axon_bench
