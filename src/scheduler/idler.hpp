// Idler: carries out a WaitStrategy while an executor or wait set finds
// nothing to do: spin, then yield, then sleep on futex words.
#pragma once

#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <span>

#include "axon/transport.hpp"
#include "axon/wait_strategy.hpp"
#include "src/base/cpu_relax.hpp"
#include "src/base/futex.hpp"

namespace axon::detail {

/// Longest single sleep: a safety net, so a wait never depends on one wake
/// alone (the registry wakes sleepers when a publisher appears or goes).
inline constexpr std::int64_t kMaxSleepNs = 50'000'000;
/// Longest sleep when some subscription has no futex word (or more than
/// futex_waitv watches): those are polled.
inline constexpr std::int64_t kPollSleepNs = 1'000'000;

/// One per waiting thread; not thread-safe. Does not allocate.
class Idler {
 public:
  explicit Idler(WaitStrategy strategy) noexcept : strategy_(strategy) {}

  /// Work was found: the next idle period starts with spinning again.
  void reset() noexcept { idle_since_ns_ = -1; }

  /// One idle step at time `now`, never past `wake_at_ns`. Spins or yields
  /// once, or registers as a waiter on `words`, checks `ready()` (the
  /// protocol of futex::Waiter: never sleep without that check) and sleeps
  /// unless it is true. Returns true when it slept (a wake or a timeout).
  /// With a `source` (see WaitSource), a sleep is the source's: the
  /// transport watches what its messages arrive on too and handles them on
  /// waking, one wake-up per message instead of its thread's and then ours.
  template <class Ready>
  bool step(std::span<WakeWord* const> words, bool poll_only, std::int64_t now, std::int64_t wake_at_ns, Ready&& ready,
            WaitSource* source = nullptr) noexcept {
    if (idle_since_ns_ < 0) {
      idle_since_ns_ = now;
    }
    const std::int64_t idle_ns = now - idle_since_ns_;
    switch (strategy_.kind()) {
      case WaitStrategy::Kind::kBusySpin: spin(source); return false;
      case WaitStrategy::Kind::kSpinYieldSleep:
        if (idle_ns < strategy_.spin_ns()) {
          spin(source);
          return false;
        }
        if (idle_ns < strategy_.spin_ns() + strategy_.yield_ns()) {
          ::sched_yield();
          return false;
        }
        break;
      case WaitStrategy::Kind::kBlocking: break;
    }
    std::int64_t timeout_ns = std::min(wake_at_ns - now, kMaxSleepNs);
    if (poll_only) {
      timeout_ns = std::min(timeout_ns, kPollSleepNs);
    }
    if (timeout_ns <= 0) {
      return false;
    }
    if (source != nullptr && !words.empty()) {
      WaitSource::Slept slept = WaitSource::Slept::kDidNotSleep;
      {
        futex::Waiter waiter(words);
        if (ready()) {
          return false;
        }
        slept = source->sleep(words, waiter.seen(), timeout_ns);
        if (slept == WaitSource::Slept::kDidNotSleep) {
          waiter.wait(timeout_ns);
          return true;
        }
      }  // waiters counted down first: what the source delivers wakes nobody here
      if (slept == WaitSource::Slept::kArrived) {
        source->after_sleep();
      }
      return true;
    }
    futex::Waiter waiter(words);
    if (ready()) {
      return false;
    }
    if (words.empty()) {
      const timespec pause{.tv_sec = 0, .tv_nsec = static_cast<long>(timeout_ns)};
      ::nanosleep(&pause, nullptr);
    } else {
      waiter.wait(timeout_ns);
    }
    return true;
  }

 private:
  /// One spin: the source polled (what it handles is found by the caller's
  /// next look), or a pause when it has nothing.
  static void spin(WaitSource* source) noexcept {
    if (source == nullptr || !source->poll()) {
      cpu_relax();
    }
  }

  WaitStrategy strategy_;
  std::int64_t idle_since_ns_ = -1;
};

}  // namespace axon::detail
