// ExecutorCore: what both executors share: the subscriptions sorted into
// priority levels, the words to sleep on, stop(), and the deadline and
// liveliness bookkeeping.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "axon/callback_subscription.hpp"
#include "axon/executor.hpp"
#include "axon/result.hpp"
#include "axon/transport.hpp"
#include "axon/wait_strategy.hpp"
#include "src/base/clock.hpp"

namespace axon::detail {

/// now + duration in CLOCK_MONOTONIC ns, saturated (spin_for() with a huge duration).
inline std::int64_t deadline_after(std::chrono::nanoseconds duration) noexcept {
  const std::int64_t now = monotonic_now_ns();
  const std::int64_t room = std::numeric_limits<std::int64_t>::max() - now;
  return duration.count() >= room ? std::numeric_limits<std::int64_t>::max()
                                  : now + std::max<std::int64_t>(0, duration.count());
}

/// How often a busy executor (one that never sleeps) checks liveliness.
inline constexpr std::int64_t kLivelinessPeriodNs = 5'000'000;

/// One subscription of an executor.
struct Entry {
  std::shared_ptr<SubscriptionBase> sub;
  int priority = 0;
  std::uint32_t level = 0;  ///< Index of its priority level, 0 = highest.
  std::uint32_t index = 0;  ///< Position in ExecutorCore::entries().
  std::int64_t deadline_ns = 0;

  // Deadline and liveliness bookkeeping: the checking thread only (the
  // spinning thread).
  std::uint64_t seen_dispatched = 0;
  std::int64_t period_start_ns = 0;  ///< Last message seen or deadline fired.
  std::int64_t last_message_ns = 0;
  std::uint64_t missed_total = 0;
  std::uint64_t lost_seen = 0;

  /// Messages dispatched: written by the thread that owns the subscription
  /// at the time, read by the checking thread.
  std::atomic<std::uint64_t> dispatched{0};

  // Multi-threaded executor only (see multi_threaded_executor.cpp).
  std::atomic<std::uint32_t> state{0};   ///< kOwned / kDirty bits.
  std::atomic<std::uint32_t> events{0};  ///< Handler calls the owner must make.
  std::atomic<std::uint64_t> event_missed_total{0};
  std::atomic<std::int64_t> event_last_message_ns{0};
  std::atomic<std::uint64_t> event_lost{0};
  std::atomic<std::uint64_t> event_lost_total{0};

  void count_dispatch() noexcept {
    // Relaxed load and store, no RMW: only the owning thread writes it;
    // ownership moves with happens-before (queue hand-off or spin thread).
    dispatched.store(dispatched.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};

/// Thread safety: add(), remove(), begin_spin() and end_spin() from one
/// thread at a time (the owner of the executor); stop() from any thread;
/// the rest from the spinning thread.
class ExecutorCore {
 public:
  explicit ExecutorCore(WaitStrategy strategy) noexcept : strategy_(strategy) {}
  ~ExecutorCore();
  ExecutorCore(const ExecutorCore&) = delete;
  ExecutorCore& operator=(const ExecutorCore&) = delete;

  Result<void> add(std::shared_ptr<SubscriptionBase> subscription, SubscriptionOptions options);
  Result<void> remove(const std::shared_ptr<SubscriptionBase>& subscription);

  /// Claims the executor for one spinning thread; kInvalidArgument when it
  /// spins already.
  Result<void> begin_spin();
  /// Lets go of it and forgets a stop() request.
  void end_spin() noexcept;
  void stop() noexcept;
  [[nodiscard]] bool stopping() const noexcept {
    // Acquire: pairs with the store in stop().
    return stop_.load(std::memory_order_acquire);
  }

  /// Takes and dispatches messages on this thread, strictly by priority:
  /// after each pass that found a message at some level it starts again at
  /// the highest level. Returns after a pass found nothing, or `budget`
  /// messages.
  std::size_t dispatch_ready(std::size_t budget) noexcept;
  /// Whether any subscription has a message (spinning thread, owner of all).
  bool any_ready() noexcept;

  /// Calls fire(entry, event) for each subscription whose deadline passed;
  /// returns the time of the nearest next deadline (max when none).
  template <class Fire>
  std::int64_t check_deadlines(std::int64_t now, Fire&& fire) {
    std::int64_t nearest = std::numeric_limits<std::int64_t>::max();
    for (auto& e : entries_) {
      if (e->deadline_ns <= 0) {
        continue;
      }
      // Relaxed: a count; a late view only moves the deadline later by one round.
      const std::uint64_t dispatched = e->dispatched.load(std::memory_order_relaxed);
      if (dispatched != e->seen_dispatched) {
        e->seen_dispatched = dispatched;
        e->period_start_ns = now;
        e->last_message_ns = now;
      }
      if (now - e->period_start_ns >= e->deadline_ns) {
        e->period_start_ns = now;
        e->missed_total += 1;
        fire(*e, DeadlineEvent{.topic = e->sub->topic(),
                               .deadline_ns = e->deadline_ns,
                               .last_message_ns = e->last_message_ns,
                               .missed_total = e->missed_total});
      }
      nearest = std::min(nearest, e->period_start_ns + e->deadline_ns);
    }
    return nearest;
  }

  /// Calls fire(entry, event) for each subscription whose publishers_lost
  /// grew; looks only when `woke` (a sleep just ended) or every
  /// kLivelinessPeriodNs, so a busy executor does not read every
  /// subscription's counter line on each round.
  template <class Fire>
  void check_liveliness(std::int64_t now, bool woke, Fire&& fire) {
    if (!woke && now < next_liveliness_ns_) {
      return;
    }
    next_liveliness_ns_ = now + kLivelinessPeriodNs;
    for (auto& e : entries_) {
      const std::uint64_t lost = e->sub->publishers_lost();
      if (lost > e->lost_seen) {
        const std::uint64_t fresh = lost - e->lost_seen;
        e->lost_seen = lost;
        fire(*e, LivelinessEvent{.topic = e->sub->topic(), .lost = fresh, .lost_total = lost});
      }
    }
  }

  [[nodiscard]] WaitStrategy strategy() const noexcept { return strategy_; }
  [[nodiscard]] std::span<const std::unique_ptr<Entry>> entries() const noexcept { return entries_; }
  [[nodiscard]] std::size_t level_count() const noexcept { return level_begin_.empty() ? 0 : level_begin_.size() - 1; }
  /// The stop word plus every subscription's word (at most futex::kMaxWords).
  [[nodiscard]] std::span<WakeWord* const> words() const noexcept { return words_; }
  /// Some subscription is not in words(): sleeps must be short.
  [[nodiscard]] bool poll_only() const noexcept { return poll_only_; }
  /// The first subscription's WaitSource that has one: sleeps are its.
  [[nodiscard]] WaitSource* wait_source() const noexcept { return wait_source_; }

 private:
  void rebuild() noexcept;

  WaitStrategy strategy_;
  std::vector<std::unique_ptr<Entry>> entries_;  ///< By priority, highest first; stable.
  std::vector<std::size_t> level_begin_;         ///< First entry of each level, then entries_.size().
  std::vector<WakeWord*> words_;
  bool poll_only_ = false;
  WaitSource* wait_source_ = nullptr;
  std::int64_t next_liveliness_ns_ = 0;
  WakeWord stop_word_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> spinning_{false};
};

}  // namespace axon::detail
