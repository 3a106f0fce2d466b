// WaitStrategy: what an executor or wait set does while nothing is ready.
#pragma once

#include <cstdint>

namespace axon {

/// How a waiting thread spends the time until a message arrives.
///   - busy_spin(): polls without pause; lowest latency, burns a whole core.
///   - spin_yield_sleep(spin_ns, yield_ns): polls for spin_ns, then polls and
///     sched_yield()s for yield_ns, then sleeps on the subscribers' futex
///     words, so a publish wakes it at once.
///   - blocking(): sleeps on the futex words right away; no CPU while idle,
///     a wake-up (a few microseconds) per message that finds it asleep.
/// A plain value: copy it freely. Publishers make a system call only for a
/// subscriber whose waiter sleeps, never for one that spins.
class WaitStrategy {
 public:
  enum class Kind : std::uint8_t { kBusySpin, kSpinYieldSleep, kBlocking };

  [[nodiscard]] static constexpr WaitStrategy busy_spin() noexcept { return {Kind::kBusySpin, 0, 0}; }
  /// The default spin covers the gap between messages of a topic at 5 kHz
  /// and more, so a steady stream is caught while polling (a message that
  /// arrives during sched_yield() pays the yield, about 1 us on a VM); a
  /// quiet topic sleeps after 250 us.
  [[nodiscard]] static constexpr WaitStrategy spin_yield_sleep(std::int64_t spin_ns = 200'000,
                                                               std::int64_t yield_ns = 50'000) noexcept {
    return {Kind::kSpinYieldSleep, spin_ns < 0 ? 0 : spin_ns, yield_ns < 0 ? 0 : yield_ns};
  }
  [[nodiscard]] static constexpr WaitStrategy blocking() noexcept { return {Kind::kBlocking, 0, 0}; }

  [[nodiscard]] constexpr Kind kind() const noexcept { return kind_; }
  /// Polling time before yielding (kSpinYieldSleep only).
  [[nodiscard]] constexpr std::int64_t spin_ns() const noexcept { return spin_ns_; }
  /// Yielding time before sleeping (kSpinYieldSleep only).
  [[nodiscard]] constexpr std::int64_t yield_ns() const noexcept { return yield_ns_; }

 private:
  constexpr WaitStrategy(Kind kind, std::int64_t spin_ns, std::int64_t yield_ns) noexcept
      : kind_(kind), spin_ns_(spin_ns), yield_ns_(yield_ns) {}

  Kind kind_;
  std::int64_t spin_ns_;
  std::int64_t yield_ns_;
};

}  // namespace axon
