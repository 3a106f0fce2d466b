#include "src/scheduler/executor_core.hpp"

#include <algorithm>
#include <string>

#include "src/base/clock.hpp"
#include "src/base/futex.hpp"

namespace axon::detail {

ExecutorCore::~ExecutorCore() {
  for (auto& e : entries_) {
    e->sub->detach();
  }
}

Result<void> ExecutorCore::add(std::shared_ptr<SubscriptionBase> subscription, SubscriptionOptions options) {
  if (!subscription) {
    return Error(ErrorCode::kInvalidArgument, "executor add(): null subscription");
  }
  // Acquire: pairs with the release in end_spin().
  if (spinning_.load(std::memory_order_acquire)) {
    return Error(ErrorCode::kInvalidArgument, "executor add(): call it while the executor is not spinning");
  }
  if (!subscription->try_attach()) {
    return Error(ErrorCode::kInvalidArgument, "executor add(): the subscription of topic '" + subscription->topic() +
                                                  "' already belongs to an executor; remove() it there first");
  }
  auto entry = std::make_unique<Entry>();
  entry->sub = std::move(subscription);
  entry->priority = options.priority;
  entry->deadline_ns = entry->sub->deadline_ns();
  entry->period_start_ns = monotonic_now_ns();  // a deadline counts from add()
  entry->lost_seen = entry->sub->publishers_lost();
  // Keep add order within a priority: upper_bound on descending priority.
  auto at = std::upper_bound(entries_.begin(), entries_.end(), options.priority,
                             [](int priority, const std::unique_ptr<Entry>& e) { return priority > e->priority; });
  entries_.insert(at, std::move(entry));
  rebuild();
  return {};
}

Result<void> ExecutorCore::remove(const std::shared_ptr<SubscriptionBase>& subscription) {
  // Acquire: pairs with the release in end_spin().
  if (spinning_.load(std::memory_order_acquire)) {
    return Error(ErrorCode::kInvalidArgument, "executor remove(): call it while the executor is not spinning");
  }
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const std::unique_ptr<Entry>& e) { return e->sub == subscription; });
  if (it == entries_.end()) {
    return Error(ErrorCode::kInvalidArgument, "executor remove(): the subscription is not in this executor");
  }
  (*it)->sub->detach();
  entries_.erase(it);
  rebuild();
  return {};
}

void ExecutorCore::rebuild() noexcept {
  level_begin_.clear();
  words_.clear();
  words_.push_back(&stop_word_);
  poll_only_ = false;
  wait_source_ = nullptr;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = *entries_[i];
    if (i == 0 || e.priority != entries_[i - 1]->priority) {
      level_begin_.push_back(i);
    }
    e.level = static_cast<std::uint32_t>(level_begin_.size() - 1);
    e.index = static_cast<std::uint32_t>(i);
    WakeWord* word = e.sub->wake_word();
    if (word == nullptr || words_.size() == futex::kMaxWords) {
      poll_only_ = true;  // polled with short sleeps instead
    } else {
      words_.push_back(word);
    }
    if (wait_source_ == nullptr) {
      wait_source_ = e.sub->wait_source();  // lives as long as the subscription, which the entry holds
    }
  }
  level_begin_.push_back(entries_.size());
}

Result<void> ExecutorCore::begin_spin() {
  // Acq_rel: one spinning thread at a time; it sees what add() did.
  if (spinning_.exchange(true, std::memory_order_acq_rel)) {
    return Error(ErrorCode::kInvalidArgument, "executor: another thread is spinning it already");
  }
  return {};
}

void ExecutorCore::end_spin() noexcept {
  // Seq_cst: a stop() that raced with the end of the spin is forgotten, not
  // applied to the next one.
  stop_.store(false, std::memory_order_seq_cst);
  // Release: pairs with the acquire in add()/remove().
  spinning_.store(false, std::memory_order_release);
}

void ExecutorCore::stop() noexcept {
  // Seq_cst: before the wake below; a sleeper checks the flag after
  // registering on the word (futex::Waiter protocol).
  stop_.store(true, std::memory_order_seq_cst);
  futex::wake_all(stop_word_);
}

std::size_t ExecutorCore::dispatch_ready(std::size_t budget) noexcept {
  std::size_t count = 0;
  const std::size_t levels = level_count();
  for (;;) {
    bool found = false;
    for (std::size_t level = 0; level < levels && !found; ++level) {
      // One message per subscription per pass: fair within a level.
      for (std::size_t i = level_begin_[level]; i < level_begin_[level + 1]; ++i) {
        Entry& e = *entries_[i];
        if (e.sub->dispatch_one() == DispatchResult::kDispatched) {
          e.count_dispatch();
          found = true;
          if (++count >= budget) {
            return count;
          }
        }
      }
    }
    if (!found || stopping()) {
      return count;
    }
  }
}

bool ExecutorCore::any_ready() noexcept {
  for (auto& e : entries_) {
    if (e->sub->has_data()) {
      return true;
    }
  }
  return stopping();
}

}  // namespace axon::detail
