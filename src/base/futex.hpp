// Process-shared futex calls on a WakeWord (see axon/transport.hpp): the one
// place axon sleeps waiting for a message and the one place it wakes a
// sleeper. Shared (not FUTEX_PRIVATE) futexes: the words live in memory
// mapped by several processes.
#pragma once

#include <cstdint>
#include <span>

#include "axon/transport.hpp"

namespace axon::futex {

/// A full memory barrier (StoreLoad), as atomic_thread_fence(seq_cst). On
/// x86-64 a locked add to the stack is the cheaper full barrier (what the
/// Linux kernel's smp_mb() uses): mfence also orders non-temporal and
/// write-combining stores, which costs tens of cycles more on AMD cores.
inline void full_fence() noexcept {
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
  asm volatile("lock orq $0, (%%rsp)" ::: "memory", "cc");
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);  // ThreadSanitizer models this one
#endif
}

/// Bumps the word's sequence and wakes every thread sleeping on it.
void wake_all(WakeWord& word) noexcept;

/// Publisher side, after it queued a message and issued full_fence():
/// wakes the word's waiters, if any. No system call when nobody waits.
inline void notify_if_waiting(WakeWord& word) noexcept {
  // Relaxed: ordered by the caller's full_fence() after its ring pushes,
  // which pairs with the waiter's seq_cst increment of `waiters` before it
  // checks the rings (see Waiter below). Either the waiter sees the message
  // or we see the waiter.
  if (word.waiters.load(std::memory_order_relaxed) != 0) {
    wake_all(word);
  }
}

/// What a wait ended with.
enum class WaitResult : std::uint8_t { kWoken, kTimedOut, kInterrupted };

/// Sleeps until one of `words` moves away from the sequence in `seen` (same
/// index), `timeout_ns` passes (< 0: no timeout) or a signal arrives. At
/// most kMaxWords words (futex_waitv's limit).
inline constexpr std::size_t kMaxWords = 128;
WaitResult wait_any(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen,
                    std::int64_t timeout_ns) noexcept;

/// Counts a waiter on a set of words for its lifetime. Usage:
///   Waiter waiter(words);                  // waiters += 1, sequences read
///   if (!anything_ready()) waiter.wait(t);  // sleep unless a publisher moved on
/// The increment is seq_cst and comes before the caller's readiness check,
/// so a publisher that queued after that check sees the waiter and wakes it.
class Waiter {
 public:
  explicit Waiter(std::span<WakeWord* const> words) noexcept;
  ~Waiter();
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;
  WaitResult wait(std::int64_t timeout_ns) noexcept;
  /// The sequences read at construction (one per word), for waits elsewhere.
  [[nodiscard]] std::span<const std::uint32_t> seen() const noexcept { return {seen_, words_.size()}; }

 private:
  std::span<WakeWord* const> words_;
  std::uint32_t seen_[kMaxWords];
};

}  // namespace axon::futex
