// MultiThreadedExecutor: the spinning thread waits for messages and queues
// subscriptions that have one; N workers run their callbacks.
//
// Ownership protocol (Entry::state): a subscription is owned by at most one
// thread at a time, and only its owner calls has_data()/dispatch_one() or
// runs its handlers. The spinning thread ("poller") claims a free
// subscription, looks for work, and either queues it (ownership passes
// through the queue to a worker) or lets it go. A worker runs one message,
// then queues the subscription again if it has more, or lets it go. When the
// poller finds a subscription owned, it sets kDirty instead, so the owner
// looks once more before letting go: a message that arrived between the
// owner's last look and its release is never stranded.
#include <latch>
#include <limits>
#include <optional>
#include <thread>
#include <vector>

#include "axon/executor.hpp"
#include "src/base/clock.hpp"
#include "src/base/futex.hpp"
#include "src/scheduler/executor_core.hpp"
#include "src/scheduler/idler.hpp"
#include "src/scheduler/spin_clock.hpp"
#include "src/scheduler/work_lanes.hpp"

namespace axon {
namespace detail {
namespace {

constexpr std::uint32_t kOwned = 1;
constexpr std::uint32_t kDirty = 2;
constexpr std::uint32_t kDeadlineEvent = 1;
constexpr std::uint32_t kLostEvent = 2;

/// One spin() of a MultiThreadedExecutor: the lanes and the workers.
class WorkerPool {
 public:
  WorkerPool(ExecutorCore& core, const MultiThreadedOptions& options)
      : core_(core), options_(options), lanes_(per_level(core), options.threads + 1, options.threads) {}

  /// Starts the workers; fails (with every worker joined) when one could
  /// not apply its ThreadOptions.
  Result<void> start() {
    std::vector<std::optional<Error>> errors(options_.threads);
    std::latch started(static_cast<std::ptrdiff_t>(options_.threads));
    for (std::size_t w = 0; w < options_.threads; ++w) {
      threads_.emplace_back([this, w, &errors, &started] {
        if (auto ok = apply_thread_options(options_.worker_thread); !ok) {
          errors[w] = ok.error();
        }
        started.count_down();  // happens-before the reads of errors below
        worker_loop(w);
      });
    }
    started.wait();
    for (auto& error : errors) {
      if (error) {
        join();
        return Error(error->code(), "MultiThreadedExecutor worker thread: " + std::string(error->message()));
      }
    }
    return {};
  }

  /// The poller: runs on the spinning thread until stop() or `until_ns`.
  void poll(std::int64_t until_ns) {
    Idler idler(core_.strategy());
    SpinClock clock(core_.strategy());
    bool woke = false;
    while (!core_.stopping()) {
      if (woke) {
        clock.refresh();  // it slept: the last reading is stale
      }
      const std::int64_t now = clock.now();
      std::size_t queued = schedule_all();
      const std::int64_t next_deadline = core_.check_deadlines(now, [&](Entry& e, const DeadlineEvent& event) {
        // Relaxed payload stores: published by the release fetch_or in post().
        e.event_missed_total.store(event.missed_total, std::memory_order_relaxed);
        e.event_last_message_ns.store(event.last_message_ns, std::memory_order_relaxed);
        queued += post(e, kDeadlineEvent);
      });
      core_.check_liveliness(now, woke, [&](Entry& e, const LivelinessEvent& event) {
        // Relaxed: published by the release fetch_or in post().
        e.event_lost.fetch_add(event.lost, std::memory_order_relaxed);
        e.event_lost_total.store(event.lost_total, std::memory_order_relaxed);
        queued += post(e, kLostEvent);
      });
      if (queued > 0) {
        wake_workers();
        idler.reset();
        clock.refresh();
      }
      if (now >= until_ns) {
        break;
      }
      woke = idler.step(
          core_.words(), core_.poll_only(), now, std::min(until_ns, next_deadline),
          [&] {
            const std::size_t found = schedule_all();
            if (found > 0) {
              wake_workers();
            }
            return found > 0 || core_.stopping();
          },
          core_.wait_source());
    }
  }

  /// Stops and joins the workers, then frees every subscription for the next spin.
  void join() {
    // Seq_cst: before the wake; workers check it after registering as waiters.
    workers_stop_.store(true, std::memory_order_seq_cst);
    futex::wake_all(work_word_);
    for (auto& t : threads_) {
      t.join();
    }
    threads_.clear();
    for (const auto& e : core_.entries()) {
      // Relaxed: the workers are joined (happens-before through join()).
      e->state.store(0, std::memory_order_relaxed);
    }
  }

 private:
  static std::vector<std::size_t> per_level(const ExecutorCore& core) {
    std::vector<std::size_t> counts(core.level_count(), 0);
    for (const auto& e : core.entries()) {
      counts[e->level] += 1;
    }
    return counts;
  }

  [[nodiscard]] std::size_t poller_producer() const noexcept { return options_.threads; }

  /// Queues every free subscription that has work; returns how many.
  std::size_t schedule_all() noexcept {
    std::size_t queued = 0;
    for (const auto& e : core_.entries()) {
      queued += try_schedule(*e);
    }
    return queued;
  }

  /// Poller only. Cases:
  ///   1. Free: claim it; queue it if it has a message or a pending event,
  ///      else let it go again (nobody else claims, so a plain store).
  ///   2. Owned, not dirty: set kDirty, so the owner looks again before
  ///      letting go.
  ///   3. Owned and dirty: nothing to do.
  std::size_t try_schedule(Entry& e) noexcept {
    // Acquire: pairs with the worker's release when it let go, so the
    // poller's has_data() follows the worker's last take().
    std::uint32_t state = e.state.load(std::memory_order_acquire);
    for (;;) {
      if (state == 0) {
        if (!e.state.compare_exchange_weak(state, kOwned, std::memory_order_acquire, std::memory_order_acquire)) {
          continue;
        }
        // Acquire: pairs with the release fetch_or in post().
        if (e.events.load(std::memory_order_acquire) != 0 || e.sub->has_data()) {
          enqueue(poller_producer(), e);
          return 1;
        }
        // Release: the next owner's acquire sees this has_data()'s rescan.
        e.state.store(0, std::memory_order_release);
        return 0;
      }
      if ((state & kDirty) != 0) {
        return 0;
      }
      // Release: orders nothing of ours; acquire on failure to reload.
      if (e.state.compare_exchange_weak(state, state | kDirty, std::memory_order_release, std::memory_order_acquire)) {
        return 0;
      }
    }
  }

  /// Records a handler call for the owner to make, then schedules the entry.
  std::size_t post(Entry& e, std::uint32_t event) noexcept {
    // Release: publishes the payload stores; pairs with the owner's acquire exchange.
    e.events.fetch_or(event, std::memory_order_release);
    return try_schedule(e);
  }

  void enqueue(std::size_t producer, Entry& e) noexcept {
    while (!lanes_.push(producer, e.level, e.index)) {
      // Unreachable with the lanes' sizing; waiting beats losing the entry.
      std::this_thread::yield();
    }
  }

  void wake_workers() noexcept {
    // Seq_cst fence: orders the pushes (queued_ counter) before the read of
    // the waiter count in notify_if_waiting() (futex::Waiter protocol).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    futex::notify_if_waiting(work_word_);
  }

  void worker_loop(std::size_t worker) {
    Idler idler(core_.strategy());
    SpinClock clock(core_.strategy());
    WakeWord* const words[] = {&work_word_};
    // Acquire: pairs with the seq_cst store in join().
    while (!workers_stop_.load(std::memory_order_acquire)) {
      std::uint32_t index = 0;
      if (lanes_.pop(worker, index)) {
        idler.reset();
        clock.refresh();
        run(worker, *core_.entries()[index]);
        continue;
      }
      idler.step(words, false, clock.now(), std::numeric_limits<std::int64_t>::max(),
                 [this] { return lanes_.has_work() || workers_stop_.load(std::memory_order_seq_cst); });
    }
  }

  /// Worker, owning `e`: pending handlers, one message, then queue it again
  /// or let it go.
  void run(std::size_t worker, Entry& e) noexcept {
    for (;;) {
      // Acquire: pairs with the release fetch_or in post().
      const std::uint32_t events = e.events.exchange(0, std::memory_order_acquire);
      if ((events & kDeadlineEvent) != 0) {
        e.sub->handle_deadline_missed(DeadlineEvent{
            .topic = e.sub->topic(),
            .deadline_ns = e.deadline_ns,
            .last_message_ns = e.event_last_message_ns.load(std::memory_order_relaxed),  // ordered by the exchange
            .missed_total = e.event_missed_total.load(std::memory_order_relaxed)});
      }
      if ((events & kLostEvent) != 0) {
        e.sub->handle_publisher_lost(LivelinessEvent{
            .topic = e.sub->topic(),
            .lost = e.event_lost.exchange(0, std::memory_order_relaxed),  // ordered by the exchange above
            .lost_total = e.event_lost_total.load(std::memory_order_relaxed)});
      }
      if (e.sub->dispatch_one() == DispatchResult::kDispatched) {
        e.count_dispatch();
      }
      // Acquire: pairs with the release fetch_or in post().
      if (e.events.load(std::memory_order_acquire) != 0 || e.sub->has_data()) {
        // More to do: back of its lane, so higher priorities and other
        // subscriptions of the level go first. Ownership moves with it.
        enqueue(worker, e);
        return;
      }
      // Cases: 1. kOwned: let go (release: the next owner sees our take()s).
      //        2. kOwned|kDirty: the poller saw activity; clear the bit,
      //           keep ownership and look again.
      std::uint32_t expected = kOwned;
      if (e.state.compare_exchange_strong(expected, 0, std::memory_order_release, std::memory_order_acquire)) {
        return;
      }
      e.state.store(kOwned, std::memory_order_relaxed);  // only the owner clears kDirty
    }
  }

  ExecutorCore& core_;
  const MultiThreadedOptions& options_;
  WorkLanes lanes_;
  WakeWord work_word_;
  std::atomic<bool> workers_stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace
}  // namespace detail

namespace {

constexpr std::size_t kSpinSomeBudget = 4096;

}  // namespace

MultiThreadedExecutor::MultiThreadedExecutor(MultiThreadedOptions options)
    : options_(std::move(options)), core_(std::make_unique<detail::ExecutorCore>(options_.wait_strategy)) {}

MultiThreadedExecutor::~MultiThreadedExecutor() = default;

Result<void> MultiThreadedExecutor::add(std::shared_ptr<SubscriptionBase> subscription, SubscriptionOptions options) {
  return core_->add(std::move(subscription), options);
}

Result<void> MultiThreadedExecutor::remove(const std::shared_ptr<SubscriptionBase>& subscription) {
  return core_->remove(subscription);
}

Result<void> MultiThreadedExecutor::spin() { return run_until(std::numeric_limits<std::int64_t>::max()); }

Result<void> MultiThreadedExecutor::spin_for(std::chrono::nanoseconds duration) {
  return run_until(detail::deadline_after(duration));
}

Result<std::size_t> MultiThreadedExecutor::spin_some() {
  if (auto ok = core_->begin_spin(); !ok) {
    return ok.error();
  }
  const std::size_t count = core_->dispatch_ready(kSpinSomeBudget);
  const std::int64_t now = monotonic_now_ns();
  core_->check_deadlines(now,
                         [](detail::Entry& e, const DeadlineEvent& event) { e.sub->handle_deadline_missed(event); });
  core_->check_liveliness(now, false,
                          [](detail::Entry& e, const LivelinessEvent& event) { e.sub->handle_publisher_lost(event); });
  core_->end_spin();
  return count;
}

void MultiThreadedExecutor::stop() noexcept { core_->stop(); }

Result<void> MultiThreadedExecutor::run_until(std::int64_t until_ns) {
  if (options_.threads == 0) {
    return Error(ErrorCode::kInvalidArgument, "MultiThreadedExecutor: threads must be at least 1");
  }
  if (auto ok = core_->begin_spin(); !ok) {
    return ok.error();
  }
  Result<void> result;
  {
    detail::WorkerPool pool(*core_, options_);
    result = pool.start();
    if (result) {
      pool.poll(until_ns);
      pool.join();
    }
  }
  core_->end_spin();
  return result;
}

}  // namespace axon
