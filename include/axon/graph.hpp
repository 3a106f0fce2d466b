// Graph events: "a publisher or subscriber of topic X appeared or left",
// waited for or handed to a callback, without polling. The transport moves
// one futex word whenever any endpoint of the domain comes or goes (a dead
// process's too); a watcher sleeps on it and diffs a snapshot of its topic's
// endpoints (docs/design/graph-events.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "axon/callback_subscription.hpp"
#include "axon/result.hpp"
#include "axon/transport.hpp"

namespace axon {

/// What happened to an endpoint.
enum class GraphChange : std::uint8_t { kAppeared, kLeft };

/// What a wait for a graph condition found (both are outcomes).
enum class GraphWait : std::uint8_t { kMet, kTimedOut };

/// One endpoint of the watched topic that appeared or left.
struct GraphEvent {
  std::string_view topic;  ///< Valid while the watcher lives.
  GraphChange change = GraphChange::kAppeared;
  GraphEndpoint endpoint;  ///< Kind, id, node name and pid (as it was seen last, for kLeft).
};

/// How many endpoints of `kind` are in `endpoints`.
[[nodiscard]] std::size_t count_endpoints(std::span<const GraphEndpoint> endpoints, GraphEndpointKind kind) noexcept;

/// Watches one topic's endpoints. The first poll() or wait() reports every
/// endpoint present then as kAppeared; later ones what changed since.
///
/// Thread safety: one thread at a time. poll() and wait() allocate (a
/// snapshot of the topic's endpoints: the slow path, taken only after the
/// domain's graph moved) and never wait for the domain lock: when another
/// thread or a (possibly stopped) process holds it, the snapshot is retried
/// (every 1 ms in wait(); at the next poll()).
class GraphWatcher {
 public:
  /// `keep` keeps `source` alive (the node's transport).
  GraphWatcher(std::shared_ptr<void> keep, GraphSource& source, std::string topic);
  GraphWatcher(GraphWatcher&&) noexcept = default;
  GraphWatcher& operator=(GraphWatcher&&) noexcept = default;
  GraphWatcher(const GraphWatcher&) = delete;
  GraphWatcher& operator=(const GraphWatcher&) = delete;
  ~GraphWatcher() = default;

  /// What changed since the last call, without waiting (empty: nothing, or
  /// the graph could not be read right now; changed() stays true then).
  /// The span is valid until the next poll() or wait().
  Result<std::span<const GraphEvent>> poll();
  /// Waits until something changed or `timeout` passed (empty span: timed
  /// out, an outcome). Negative timeout: no timeout.
  Result<std::span<const GraphEvent>> wait(std::chrono::nanoseconds timeout);
  /// Waits until `holds(endpoints())` is true for a snapshot taken now or
  /// later: true, or false when `timeout` passed first (an outcome).
  /// Negative timeout: no timeout.
  Result<bool> wait_until(const std::function<bool(std::span<const GraphEndpoint>)>& holds,
                          std::chrono::nanoseconds timeout);
  /// Whether poll() may have something: the graph word moved since the last
  /// snapshot, or a snapshot is owed (retried 1 ms after one found the lock
  /// held). Lock-free, no allocation.
  [[nodiscard]] bool changed() const noexcept;
  /// Whether the last poll() could not take its snapshot (another thread or
  /// process held the domain lock): endpoints() may be out of date.
  [[nodiscard]] bool snapshot_owed() const noexcept { return owed_; }
  /// The topic's endpoints as of the last snapshot.
  [[nodiscard]] std::span<const GraphEndpoint> endpoints() const noexcept { return previous_; }
  [[nodiscard]] const std::string& topic() const noexcept { return *topic_; }
  /// The word executors and waiters sleep on.
  [[nodiscard]] WakeWord& word() const noexcept { return source_->graph_word(); }

 private:
  /// Polls, then sleeps on the graph word, until `done()` after a snapshot
  /// or the timeout (false).
  Result<bool> wait_loop(std::chrono::nanoseconds timeout, const std::function<bool()>& done);

  std::shared_ptr<void> keep_;
  GraphSource* source_;
  std::unique_ptr<std::string> topic_;  ///< Stable address: events' topic views point at it.
  std::uint32_t seen_ = 0;
  bool owed_ = true;              ///< A snapshot is due (first one, or the last attempt found the lock held).
  std::int64_t retry_at_ns_ = 0;  ///< When a snapshot that found the lock held is tried again.
  std::vector<GraphEndpoint> previous_;
  std::vector<GraphEndpoint> current_;
  std::vector<GraphEvent> events_;
};

/// A GraphWatcher whose events an executor hands to a callback (add it to a
/// SingleThreadedExecutor or MultiThreadedExecutor like any subscription;
/// Node::on_graph_event() makes one). The executor sleeps on the graph word
/// with its subscriptions' words, so an event wakes it. Dispatching
/// allocates (a snapshot): graph changes are the slow path.
class GraphSubscription final : public SubscriptionBase {
 public:
  using Callback = std::function<void(const GraphEvent&)>;
  GraphSubscription(GraphWatcher watcher, Callback callback) noexcept
      : watcher_(std::move(watcher)), callback_(std::move(callback)) {}

  /// Runs the callback once per event found (kNoData: none). An error (a
  /// damaged registry, no memory) is logged and counted as kDropped.
  DispatchResult dispatch_one() noexcept override;
  [[nodiscard]] bool has_data() noexcept override { return watcher_.changed(); }
  [[nodiscard]] WakeWord* wake_word() noexcept override { return &watcher_.word(); }
  [[nodiscard]] std::int64_t deadline_ns() const noexcept override { return 0; }
  [[nodiscard]] std::uint64_t publishers_lost() const noexcept override { return 0; }
  [[nodiscard]] const std::string& topic() const noexcept override { return watcher_.topic(); }

 private:
  GraphWatcher watcher_;
  Callback callback_;
};

}  // namespace axon
