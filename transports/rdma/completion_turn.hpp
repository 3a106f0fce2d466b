// The RDMA thread's turn (docs/design/rdma-transport.md, "Completions: busy
// polling"): who may poll a participant's completion queue and hand what it
// finds to the links and their streams, which expect one thread at a time.
// The participant's thread takes the turn for each pass over its events and
// gives it back before it sleeps. A subscriber's thread that busy-spins
// (RdmaWaitSource::poll()) tries to take it between two looks at its queue
// and, when it gets it, polls the completion queue itself: a message written
// by a peer then reaches the spinning subscriber with no system call and no
// wake-up of the RDMA thread. While spinners poll (the last poll less than
// kSpinnerLeaseNs ago), the RDMA thread leaves the completion channel out of
// its sleep, so that the card's events do not wake it for nothing.
//
// Process-local, held for one batch of completions at most, never across a
// call to another process (the handlers publish into shared memory and may
// wake a futex; neither waits for another process).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <thread>

#include "src/base/clock.hpp"

namespace axon::rdma {

/// How long the completion queue stays with the spinners after their last poll.
inline constexpr std::int64_t kSpinnerLeaseNs = 1'000'000;

/// What polls one batch of completions and handles them (the participant).
class CompletionPoller {
 public:
  /// Polls at most one batch and hands each completion to its link; the
  /// number handled. Called only by the holder of the turn.
  virtual std::size_t poll_batch() noexcept = 0;

 protected:
  CompletionPoller() = default;
  ~CompletionPoller() = default;
  CompletionPoller(const CompletionPoller&) = default;
  CompletionPoller& operator=(const CompletionPoller&) = default;
};

class CompletionTurn {
 public:
  /// Takes the turn, waiting (yielding) while a spinner holds it. The RDMA
  /// thread's, and the participant's destructor's.
  void take() noexcept {
    // Acquire: what the last holder did to the links and streams happens
    // before what this holder does.
    while (held_.exchange(true, std::memory_order_acquire)) {
      std::this_thread::yield();
    }
  }
  /// Release: this holder's work happens before the next holder's.
  void give_back() noexcept { held_.store(false, std::memory_order_release); }

  /// The participant polls for the spinners from now on (under the turn).
  void attach(CompletionPoller* poller) noexcept { poller_ = poller; }
  /// ... and no longer: every later poll() finds nothing (under the turn).
  void detach() noexcept { poller_ = nullptr; }

  /// A spinning subscriber's poll: when the turn is free, one batch of
  /// completions polled and handled on this thread. True when something
  /// was handled. No system call, no allocation; never waits.
  bool poll() noexcept {
    // Relaxed load first: a spinner that finds the turn taken does not
    // bounce its cache line; the exchange then decides (acquire, as take()).
    if (held_.load(std::memory_order_relaxed) || held_.exchange(true, std::memory_order_acquire)) {
      return false;
    }
    std::size_t handled = 0;
    if (poller_ != nullptr) {
      handled = poller_->poll_batch();
      // Relaxed: a lease seen late costs the RDMA thread one wake-up, one
      // seen early a millisecond before it watches the channel again.
      polled_at_ns_.store(monotonic_now_ns(), std::memory_order_relaxed);
      if (handled != 0) {
        by_spinners_.fetch_add(handled, std::memory_order_relaxed);  // statistics only
      }
    }
    give_back();
    return handled != 0;
  }

  /// Completions spinners polled and handled, in total (any thread).
  [[nodiscard]] std::uint64_t completions_by_spinners() const noexcept {
    return by_spinners_.load(std::memory_order_relaxed);
  }

  /// Whether spinners have polled within kSpinnerLeaseNs of `now_ns`.
  [[nodiscard]] bool spinners_polling(std::int64_t now_ns) const noexcept {
    return now_ns - polled_at_ns_.load(std::memory_order_relaxed) < kSpinnerLeaseNs;  // relaxed: see poll()
  }

 private:
  std::atomic<bool> held_{false};
  CompletionPoller* poller_ = nullptr;  ///< Read and written by the turn's holder only.
  std::atomic<std::int64_t> polled_at_ns_{std::numeric_limits<std::int64_t>::min() / 2};
  std::atomic<std::uint64_t> by_spinners_{0};
};

}  // namespace axon::rdma
