// Executors: run the callbacks of callback subscriptions on one thread
// (SingleThreadedExecutor) or on N worker threads (MultiThreadedExecutor).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "axon/callback_subscription.hpp"
#include "axon/realtime.hpp"
#include "axon/result.hpp"
#include "axon/wait_strategy.hpp"

namespace axon {

namespace detail {
class ExecutorCore;
}  // namespace detail

/// How an executor treats one subscription.
struct SubscriptionOptions {
  /// When several subscriptions have messages, those of higher priority run
  /// first (a lower one waits until every higher one is drained).
  int priority = 0;
};

/// Both executors share these guarantees:
///   - The callbacks and handlers of one subscription never run concurrently
///     with each other, and its messages reach the callback in take() order
///     (per publisher: publish order).
///   - A subscription belongs to one executor at a time (add() refuses a
///     second one).
///   - Deadlines: a subscription with SubscriberQos::deadline_ns > 0 that got
///     no message for a whole period gets its on_deadline_missed handler
///     called (again every period while it stays silent). Sleeps end no later
///     than the nearest deadline.
///   - Liveliness: when SubscriberCounters::publishers_lost grows, the
///     on_publisher_lost handler is called, right after the wake that
///     noticed it (the node's service thread wakes sleeping subscribers when
///     a publisher leaves or dies) or within ~5 ms while busy.
///   - Steady state: taking a message and running its callback does not
///     allocate, lock or make system calls (raw structs; the wait strategy
///     may sleep; liveliness is a relaxed load of a counter every few
///     milliseconds).
///   - A sleep lasts at most 50 ms: a safety net only, since the transport
///     wakes sleeping subscribers when a publisher of their topic appears,
///     leaves or dies.
struct ExecutorOptions {
  WaitStrategy wait_strategy = WaitStrategy::spin_yield_sleep();
};

/// Runs every callback on the thread that calls spin(), spin_for() or
/// spin_some().
///
/// Thread safety: add() and remove() while not spinning (they return
/// kInvalidArgument otherwise); one spinning thread at a time; stop() from
/// any thread, including callbacks.
class SingleThreadedExecutor {
 public:
  explicit SingleThreadedExecutor(ExecutorOptions options = {});
  ~SingleThreadedExecutor();
  SingleThreadedExecutor(const SingleThreadedExecutor&) = delete;
  SingleThreadedExecutor& operator=(const SingleThreadedExecutor&) = delete;

  /// Claims `subscription` for this executor. Allocates.
  Result<void> add(std::shared_ptr<SubscriptionBase> subscription, SubscriptionOptions options = {});
  /// Gives a subscription back (kInvalidArgument when it is not here).
  Result<void> remove(const std::shared_ptr<SubscriptionBase>& subscription);
  /// Runs callbacks until stop().
  Result<void> spin();
  /// Runs callbacks until `duration` passed or stop().
  Result<void> spin_for(std::chrono::nanoseconds duration);
  /// Runs the callbacks of messages queued now (higher priority first),
  /// without waiting; returns how many ran. Also checks deadlines.
  Result<std::size_t> spin_some();
  /// Makes spin()/spin_for() return soon (after the running callback).
  /// Before spin() it makes the next spin return at once. Thread-safe.
  void stop() noexcept;

 private:
  Result<void> run_until(std::int64_t until_ns);
  std::unique_ptr<detail::ExecutorCore> core_;
};

struct MultiThreadedOptions {
  /// Worker threads that run callbacks (the spinning thread only schedules).
  std::size_t threads = 2;
  WaitStrategy wait_strategy = WaitStrategy::spin_yield_sleep();
  /// Applied to each worker thread when spin() starts them.
  ThreadOptions worker_thread;
};

/// Runs callbacks on `threads` workers. The thread calling spin() waits for
/// messages, and puts each subscription with a message on the work queue of
/// its priority (one lock-free MPMC queue per priority level, sized up front);
/// idle workers take the highest-priority work first. A subscription is in a
/// queue or on a worker at most once at a time, so its callbacks stay
/// sequential and in order while different subscriptions run in parallel.
///
/// Thread safety: as SingleThreadedExecutor. Workers are started by spin() /
/// spin_for() and joined before they return; spin_some() runs on the caller.
class MultiThreadedExecutor {
 public:
  explicit MultiThreadedExecutor(MultiThreadedOptions options = {});
  ~MultiThreadedExecutor();
  MultiThreadedExecutor(const MultiThreadedExecutor&) = delete;
  MultiThreadedExecutor& operator=(const MultiThreadedExecutor&) = delete;

  Result<void> add(std::shared_ptr<SubscriptionBase> subscription, SubscriptionOptions options = {});
  Result<void> remove(const std::shared_ptr<SubscriptionBase>& subscription);
  /// Starts the workers and runs until stop(). Fails (without running) when
  /// the workers' ThreadOptions cannot be applied, or threads is 0.
  Result<void> spin();
  Result<void> spin_for(std::chrono::nanoseconds duration);
  /// Runs what is queued now on the calling thread, like SingleThreadedExecutor.
  Result<std::size_t> spin_some();
  void stop() noexcept;

 private:
  Result<void> run_until(std::int64_t until_ns);
  MultiThreadedOptions options_;
  std::unique_ptr<detail::ExecutorCore> core_;
};

}  // namespace axon
