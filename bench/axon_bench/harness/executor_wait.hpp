// The library's wait strategies (axon::WaitStrategy) as the benchmarks name
// and parse them: `axon-bench wakeup` measures each, `axon-bench throughput
// --wait` lets subscribers run an executor with one.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <axon/wait_strategy.hpp>

namespace axon_bench {

/// Whether `text` names an executor wait strategy (else a polling one of
/// wait_strategy.hpp).
inline bool is_executor_wait(const std::string& text) {
  return text == "busy-spin" || text == "spin-yield-sleep" || text == "blocking";
}

/// "busy-spin", "spin-yield-sleep" (with budgets `spin_ns`, `yield_ns`) or
/// "blocking"; throws std::invalid_argument.
inline axon::WaitStrategy parse_executor_wait(
    const std::string& text, std::int64_t spin_ns = axon::WaitStrategy::spin_yield_sleep().spin_ns(),
    std::int64_t yield_ns = axon::WaitStrategy::spin_yield_sleep().yield_ns()) {
  if (text == "busy-spin") {
    return axon::WaitStrategy::busy_spin();
  }
  if (text == "spin-yield-sleep") {
    return axon::WaitStrategy::spin_yield_sleep(spin_ns, yield_ns);
  }
  if (text == "blocking") {
    return axon::WaitStrategy::blocking();
  }
  throw std::invalid_argument("executor wait strategy '" + text + "': use busy-spin, spin-yield-sleep or blocking");
}

/// The wait_strategy of the results: "busy-spin", "blocking",
/// "spin-yield-sleep-10us-100us" (the budgets in whole microseconds).
inline std::string executor_wait_name(const axon::WaitStrategy& wait) {
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
