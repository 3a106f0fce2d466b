#include "harness/wait.hpp"

#include <stdexcept>

namespace axon_bench {

std::string BenchWait::name() const {
  if (executor) {
    return executor_wait_name(strategy);
  }
  switch (strategy.kind()) {
    case axon::WaitStrategy::Kind::kBusySpin: return "busy-poll";
    case axon::WaitStrategy::Kind::kBlocking: return "sleep-" + std::to_string(sleep_us) + "us";
    case axon::WaitStrategy::Kind::kSpinYieldSleep:
      if (strategy.spin_ns() == 0 && strategy.yield_ns() == kYieldForever.yield_ns()) {
        return "yield";
      }
      return "poll-" + executor_wait_name(strategy) + "-sleep-" + std::to_string(sleep_us) + "us";
  }
  return "?";
}

BenchWait parse_wait(const std::string& text, std::uint32_t sleep_us, std::int64_t spin_ns, std::int64_t yield_ns) {
  if (text == "busy-poll") {
    return {.strategy = axon::WaitStrategy::busy_spin(), .executor = false, .sleep_us = sleep_us};
  }
  if (text == "yield") {
    return {.strategy = kYieldForever, .executor = false, .sleep_us = sleep_us};
  }
  if (text == "sleep") {
    return {.strategy = axon::WaitStrategy::blocking(), .executor = false, .sleep_us = sleep_us};
  }
  if (text == "busy-spin") {
    return {.strategy = axon::WaitStrategy::busy_spin(), .executor = true, .sleep_us = sleep_us};
  }
  if (text == "spin-yield-sleep") {
    return {
        .strategy = axon::WaitStrategy::spin_yield_sleep(spin_ns, yield_ns), .executor = true, .sleep_us = sleep_us};
  }
  if (text == "blocking") {
    return {.strategy = axon::WaitStrategy::blocking(), .executor = true, .sleep_us = sleep_us};
  }
  throw std::invalid_argument("wait strategy '" + text +
                              "': use busy-poll, yield or sleep (polling take()), or busy-spin, spin-yield-sleep or "
                              "blocking (an executor)");
}

std::string executor_wait_name(const axon::WaitStrategy& wait) {
  switch (wait.kind()) {
    case axon::WaitStrategy::Kind::kBusySpin: return "busy-spin";
    case axon::WaitStrategy::Kind::kBlocking: return "blocking";
    case axon::WaitStrategy::Kind::kSpinYieldSleep:
      return "spin-yield-sleep-" + std::to_string(wait.spin_ns() / 1000) + "us-" +
             std::to_string(wait.yield_ns() / 1000) + "us";
  }
  return "?";
}

}  // namespace axon_bench
