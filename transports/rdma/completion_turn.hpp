// The RDMA thread's turn (docs/design/rdma-transport.md, "Completions: busy
// polling"): who may poll a participant's completion queue and hand what it
// finds to the links and their streams, which expect one thread at a time.
// The participant's thread takes the turn for each pass over its events and
// gives it back before it sleeps. A subscriber's thread that busy-spins
// (RdmaWaitSource::poll()) tries to take it between two looks at its queue
// and, when it gets it, polls the completion queue itself: a message written
// by a peer then reaches the spinning subscriber with no system call and no
// wake-up of the RDMA thread. While spinners poll (they polled since the RDMA
// thread's last look, at most kSpinnerLeaseNs ago), the RDMA thread leaves
// the completion channel out of its sleep, so that the card's events do not
// wake it for nothing. Spinners count their polls rather than stamp them: a
// clock read per poll would be a system call where the clock has no vDSO path
// (a VM on HPET), dearer than the poll itself.
//
// Process-local, held for one batch of completions at most, never across a
// call to another process (the handlers publish into shared memory and may
// wake a futex; neither waits for another process).
//
// The RDMA thread that finds the turn held sleeps until it is handed back,
// and spinners leave the turn alone while it waits: a spinner shares its CPU
// with the RDMA thread (same process, same pinning), so the thread often
// finds the turn held by a spinner it has just preempted. Yielding there (as
// before) gave the CPU back only once the scheduler's fairness allowed, after
// ~1400 sched_yield() calls per pass in the Soft-RoCE guest (docs/design/
// rdma-transport.md, "Completions").
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "axon/transport.hpp"
#include "src/base/futex.hpp"

namespace axon::rdma {

/// How often the RDMA thread looks whether spinners still poll (and so how
/// long the completion queue stays with them after their last poll, at most
/// twice this).
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
  /// Takes the turn, sleeping while a spinner holds it; spinners leave it
  /// alone from the call on. The RDMA thread's, and the participant's
  /// destructor's (one thread at a time: they are the same thread's or run
  /// after it stopped).
  void take() noexcept {
    // seq_cst: a spinner's poll() that loads `wanted_` after this store
    // leaves the turn alone; one that loaded it before may still hold the
    // turn, and is waited for below.
    wanted_.store(true, std::memory_order_seq_cst);
    // Acquire: what the last holder did to the links and streams happens
    // before what this holder does.
    while (held_.exchange(true, std::memory_order_acquire)) {
      const std::array<WakeWord*, 1> words{&handed_back_};
      // Counted (seq_cst) before the look at `held_` (seq_cst): a holder that
      // gives back after the look sees the waiter in give_back() and wakes it.
      futex::Waiter waiter(words);
      if (held_.load(std::memory_order_seq_cst)) {
        (void)waiter.wait(-1);
      }
    }
    // Relaxed: spinners that still see it set skip a poll or two; the turn
    // itself is ordered by `held_`.
    wanted_.store(false, std::memory_order_relaxed);
  }
  /// Release: this holder's work happens before the next holder's. The full
  /// fence orders the store before the look at the waiter count (the
  /// publisher's side of futex::Waiter's protocol): either take()'s look
  /// sees the turn free or this sees the waiter and wakes it.
  void give_back() noexcept {
    held_.store(false, std::memory_order_release);
    futex::full_fence();
    futex::notify_if_waiting(handed_back_);
  }
  /// Whether the RDMA thread waits for the turn (spinners then leave it).
  [[nodiscard]] bool wanted() const noexcept { return wanted_.load(std::memory_order_relaxed); }

  /// The participant polls for the spinners from now on (under the turn).
  void attach(CompletionPoller* poller) noexcept { poller_ = poller; }
  /// ... and no longer: every later poll() finds nothing (under the turn).
  void detach() noexcept { poller_ = nullptr; }

  /// A spinning subscriber's poll: when the turn is free, one batch of
  /// completions polled and handled on this thread. True when something
  /// was handled. No system call, no allocation; never waits.
  bool poll() noexcept {
    // Relaxed loads first: a spinner that finds the turn taken, or wanted by
    // the RDMA thread, does not bounce its cache line; the exchange then
    // decides (acquire, as take()).
    if (wanted_.load(std::memory_order_relaxed) || held_.load(std::memory_order_relaxed) ||
        held_.exchange(true, std::memory_order_acquire)) {
      return false;
    }
    std::size_t handled = 0;
    if (poller_ != nullptr) {
      handled = poller_->poll_batch();
      // One writer at a time (the turn's holder), so no read-modify-write.
      // Relaxed: a count seen late costs the RDMA thread one wake-up, one
      // seen early a lease before it watches the channel again.
      polls_.store(polls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
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

  /// Polls by spinners so far: the RDMA thread compares two of its looks
  /// (spinners poll while the count moves).
  [[nodiscard]] std::uint64_t spinner_polls() const noexcept {
    return polls_.load(std::memory_order_relaxed);  // relaxed: see poll()
  }

 private:
  std::atomic<bool> held_{false};
  std::atomic<bool> wanted_{false};     ///< The RDMA thread waits in take().
  WakeWord handed_back_;                ///< take() sleeps on it; give_back() wakes it.
  CompletionPoller* poller_ = nullptr;  ///< Read and written by the turn's holder only.
  std::atomic<std::uint64_t> polls_{0};
  std::atomic<std::uint64_t> by_spinners_{0};
};

/// The RDMA thread's look at the spinners: they hold the lease while their
/// poll count moved during the last period of kSpinnerLeaseNs. Owned by the
/// RDMA thread; not thread-safe.
class SpinnerWatch {
 public:
  /// Whether spinners hold the lease at `now_ns`: decided once a period
  /// (the count then compared with the last period's), else as last decided.
  [[nodiscard]] bool leased(const CompletionTurn& turn, std::int64_t now_ns) noexcept {
    if (now_ns - looked_at_ns_ >= kSpinnerLeaseNs) {
      const std::uint64_t polls = turn.spinner_polls();
      leased_ = polls != polls_seen_;
      polls_seen_ = polls;
      looked_at_ns_ = now_ns;
    }
    return leased_;
  }

  /// How long from `now_ns` until the next decision (0: due now).
  [[nodiscard]] std::int64_t next_look_in_ns(std::int64_t now_ns) const noexcept {
    const std::int64_t left = looked_at_ns_ + kSpinnerLeaseNs - now_ns;
    return left > 0 ? left : 0;
  }

 private:
  std::uint64_t polls_seen_ = 0;
  std::int64_t looked_at_ns_ = std::numeric_limits<std::int64_t>::min() / 2;
  bool leased_ = false;
};

}  // namespace axon::rdma
