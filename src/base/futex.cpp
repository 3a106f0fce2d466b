#include "src/base/futex.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>

#include "src/base/clock.hpp"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449  // Linux 5.16+
#endif

namespace axon::futex {
namespace {

std::uint32_t* raw(std::atomic<std::uint32_t>& word) noexcept {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t), "futex words are plain 32-bit words");
  return reinterpret_cast<std::uint32_t*>(&word);
}

WaitResult result_of(long rc) noexcept {
  if (rc >= 0 || errno == EAGAIN) {
    return WaitResult::kWoken;  // EAGAIN: the word moved before we slept
  }
  return errno == ETIMEDOUT ? WaitResult::kTimedOut : WaitResult::kInterrupted;
}

}  // namespace

void wake_all(WakeWord& word) noexcept {
  // Release: a waiter that reads the new sequence also sees what was queued.
  word.sequence.fetch_add(1, std::memory_order_release);
  ::syscall(SYS_futex, raw(word.sequence), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

WaitResult wait_any(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen,
                    std::int64_t timeout_ns) noexcept {
  if (words.empty() || words.size() > kMaxWords) {
    return WaitResult::kInterrupted;
  }
  if (words.size() == 1) {
    // FUTEX_WAIT takes a relative timeout.
    timespec relative{};
    relative.tv_sec = timeout_ns / 1'000'000'000;
    relative.tv_nsec = timeout_ns % 1'000'000'000;
    const long rc = ::syscall(SYS_futex, raw(words[0]->sequence), FUTEX_WAIT, seen[0],
                              timeout_ns < 0 ? nullptr : &relative, nullptr, 0);
    return result_of(rc);
  }
  futex_waitv waits[kMaxWords] = {};
  for (std::size_t i = 0; i < words.size(); ++i) {
    waits[i].uaddr = reinterpret_cast<std::uintptr_t>(raw(words[i]->sequence));
    waits[i].val = seen[i];
    waits[i].flags = FUTEX_32;  // shared: no FUTEX_PRIVATE_FLAG
  }
  // futex_waitv takes an absolute CLOCK_MONOTONIC deadline.
  timespec deadline{};
  if (timeout_ns >= 0) {
    const std::int64_t at = monotonic_now_ns() + timeout_ns;
    deadline.tv_sec = at / 1'000'000'000;
    deadline.tv_nsec = at % 1'000'000'000;
  }
  const long rc = ::syscall(SYS_futex_waitv, waits, static_cast<unsigned>(words.size()), 0,
                            timeout_ns < 0 ? nullptr : &deadline, CLOCK_MONOTONIC);
  return result_of(rc);
}

Waiter::Waiter(std::span<WakeWord* const> words) noexcept : words_(words.first(std::min(words.size(), kMaxWords))) {
  for (std::size_t i = 0; i < words_.size(); ++i) {
    // Seq_cst: ordered before the caller's readiness check (see the class
    // comment); pairs with the publisher's seq_cst fence.
    words_[i]->waiters.fetch_add(1, std::memory_order_seq_cst);
    // Acquire: pairs with the release bump in wake_all().
    seen_[i] = words_[i]->sequence.load(std::memory_order_acquire);
  }
}

Waiter::~Waiter() {
  for (WakeWord* word : words_) {
    // Relaxed: a stale count only costs a publisher a needless wake.
    word->waiters.fetch_sub(1, std::memory_order_relaxed);
  }
}

WaitResult Waiter::wait(std::int64_t timeout_ns) noexcept {
  if (words_.empty()) {
    return WaitResult::kInterrupted;
  }
  return wait_any(words_, std::span<const std::uint32_t>(seen_, words_.size()), timeout_ns);
}

}  // namespace axon::futex
