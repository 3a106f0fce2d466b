// SpinFlag: a test-and-set flag that one thread at a time holds, for
// sections of a few hundred nanoseconds whose other contenders mostly try
// and go (a publisher and its node's service thread share one per block).
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdint>

#include "src/base/cpu_relax.hpp"

namespace axon {

/// Thread safety: any thread. Meets the standard Lockable requirements, so
/// std::lock_guard<SpinFlag> and std::unique_lock<SpinFlag> work with it.
///
/// Memory ordering: try_lock() and lock() acquire, unlock() releases; each
/// acquire pairs with the release of the holder before, so whatever that
/// holder wrote before unlock() is visible to the next one after it got the
/// flag. No other ordering: the flag guards nothing but its section.
///
/// Does not allocate. lock() yields the CPU (sched_yield, a system call)
/// only after 64 failed tries: the holder may need this core to finish.
class SpinFlag {
 public:
  SpinFlag() = default;
  SpinFlag(const SpinFlag&) = delete;
  SpinFlag& operator=(const SpinFlag&) = delete;

  /// Takes the flag when it is free; false (nothing changed) when held.
  [[nodiscard]] bool try_lock() noexcept {
    // Acquire pairs with the release store in unlock() of the previous holder.
    return !held_.exchange(true, std::memory_order_acquire);
  }

  /// Takes the flag, spinning (then yielding) while another thread holds it.
  /// Uncontended: one exchange on a line of this process.
  void lock() noexcept {
    for (std::uint32_t round = 0; !try_lock(); ++round) {
      if (round < 64) {
        cpu_relax();
      } else {
        ::sched_yield();
      }
    }
  }

  /// Gives the flag back. Only its holder may call it.
  void unlock() noexcept {
    // Release pairs with the acquire exchange in try_lock() of the next holder.
    held_.store(false, std::memory_order_release);
  }

 private:
  std::atomic<bool> held_{false};
};

}  // namespace axon
