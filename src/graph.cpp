#include "axon/graph.hpp"

#include <algorithm>
#include <array>
#include <exception>
#include <thread>

#include "src/base/clock.hpp"
#include "src/base/futex.hpp"
#include "src/base/log.hpp"

namespace axon {
namespace {

/// How long a snapshot that found the domain lock held waits before the next try.
constexpr std::int64_t kRetryNs = 1'000'000;

bool same_endpoint(const GraphEndpoint& a, const GraphEndpoint& b) noexcept {
  return a.kind == b.kind && a.endpoint_id == b.endpoint_id;
}

bool contains(std::span<const GraphEndpoint> set, const GraphEndpoint& e) noexcept {
  return std::any_of(set.begin(), set.end(), [&](const GraphEndpoint& x) { return same_endpoint(x, e); });
}

}  // namespace

std::size_t count_endpoints(std::span<const GraphEndpoint> endpoints, GraphEndpointKind kind) noexcept {
  return static_cast<std::size_t>(
      std::count_if(endpoints.begin(), endpoints.end(), [kind](const GraphEndpoint& e) { return e.kind == kind; }));
}

GraphWatcher::GraphWatcher(std::shared_ptr<void> keep, GraphSource& source, std::string topic)
    : keep_(std::move(keep)), source_(&source), topic_(std::make_unique<std::string>(std::move(topic))) {}

bool GraphWatcher::changed() const noexcept {
  if (owed_) {
    return retry_at_ns_ == 0 || monotonic_now_ns() >= retry_at_ns_;
  }
  // Acquire pairs with the seq_cst increment in the registry's graph_changed().
  return source_->graph_word().sequence.load(std::memory_order_acquire) != seen_;
}

Result<std::span<const GraphEvent>> GraphWatcher::poll() {
  events_.clear();
  // Read before the snapshot, so a change made while it is taken moves the
  // word past `seen_` and is found by the next poll.
  const std::uint32_t sequence = source_->graph_word().sequence.load(std::memory_order_acquire);
  if (!owed_ && sequence == seen_) {
    return std::span<const GraphEvent>{};
  }
  auto taken = source_->try_snapshot(*topic_, current_);
  if (!taken) {
    return taken.error();
  }
  if (!*taken) {
    owed_ = true;
    retry_at_ns_ = monotonic_now_ns() + kRetryNs;
    return std::span<const GraphEvent>{};
  }
  owed_ = false;
  seen_ = sequence;
  for (const GraphEndpoint& gone : previous_) {
    if (!contains(current_, gone)) {
      events_.push_back(GraphEvent{.topic = *topic_, .change = GraphChange::kLeft, .endpoint = gone});
    }
  }
  for (const GraphEndpoint& now : current_) {
    if (!contains(previous_, now)) {
      events_.push_back(GraphEvent{.topic = *topic_, .change = GraphChange::kAppeared, .endpoint = now});
    }
  }
  previous_.swap(current_);
  return std::span<const GraphEvent>(events_);
}

Result<std::span<const GraphEvent>> GraphWatcher::wait(std::chrono::nanoseconds timeout) {
  auto done = wait_loop(timeout, [this] { return !events_.empty(); });
  if (!done) {
    return done.error();
  }
  return *done ? std::span<const GraphEvent>(events_) : std::span<const GraphEvent>{};
}

Result<bool> GraphWatcher::wait_until(const std::function<bool(std::span<const GraphEndpoint>)>& holds,
                                      std::chrono::nanoseconds timeout) {
  return wait_loop(timeout, [&] { return holds(std::span<const GraphEndpoint>(previous_)); });
}

Result<bool> GraphWatcher::wait_loop(std::chrono::nanoseconds timeout, const std::function<bool()>& done) {
  const std::int64_t start = monotonic_now_ns();
  for (;;) {
    // Counted a waiter before the check: a change made after it wakes us
    // (futex::Waiter's protocol).
    const std::array<WakeWord*, 1> words{&source_->graph_word()};
    futex::Waiter waiter(words);
    auto found = poll();
    if (!found) {
      return found.error();
    }
    if (!owed_ && done()) {  // judged on a snapshot, never on a lock that was held
      return true;
    }
    const std::int64_t left = timeout.count() < 0 ? -1 : start + timeout.count() - monotonic_now_ns();
    if (timeout.count() >= 0 && left <= 0) {
      return false;  // timed out: an outcome
    }
    if (owed_) {  // the lock was held: try again soon, never wait for it
      std::this_thread::sleep_for(std::chrono::nanoseconds(left < 0 ? kRetryNs : std::min(left, kRetryNs)));
      continue;
    }
    if (waiter.seen()[0] == seen_) {
      (void)waiter.wait(left);
    }
  }
}

DispatchResult GraphSubscription::dispatch_one() noexcept {
  try {
    auto found = watcher_.poll();
    if (!found) {
      logger().error("graph events of topic '{}': {}", watcher_.topic(), found.error().message());
      return DispatchResult::kDropped;
    }
    for (const GraphEvent& event : *found) {
      callback_(event);
    }
    return found->empty() ? DispatchResult::kNoData : DispatchResult::kDispatched;
  } catch (const std::exception& e) {
    try {
      logger().error("graph events of topic '{}': {}", watcher_.topic(), e.what());
    } catch (...) {  // NOLINT(bugprone-empty-catch): logging must not take the executor down
    }
    return DispatchResult::kDropped;
  }
}

}  // namespace axon
