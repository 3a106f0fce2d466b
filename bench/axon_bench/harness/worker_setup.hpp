// The set-up every worker process of a benchmark repeats: its node in the
// case's domain with a pool sized for what it publishes, a publisher and/or
// a subscriber of T, and the wait until their peers are connected. Errors
// come back as values whose message says what failed ("advertise: ...").
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <axon/axon.hpp>

namespace axon_bench::workers {

inline constexpr auto kConnectTimeout = std::chrono::seconds(10);
/// Each publishing node's pool gets about this much room for the payload's class.
inline constexpr std::uint64_t kPoolBudgetBytes = 64ULL << 20;
inline constexpr std::uint32_t kMaxDepth = 1024;

/// One class sized for the payload: enough chunks for any queue depth we
/// configure, without filling memory for the large sizes.
inline std::vector<axon::ChunkClassConfig> chunk_classes_for(std::size_t payload_bytes) {
  const auto count =
      static_cast<std::uint32_t>(std::clamp<std::uint64_t>(kPoolBudgetBytes / payload_bytes, 16, kMaxDepth));
  return {{.payload_bytes = static_cast<std::uint32_t>(payload_bytes), .count = count}};
}

/// Queue depth: everything the pool can have in flight (rate mode), at most
/// the ring's capacity.
inline std::uint32_t depth_for(std::size_t payload_bytes) {
  return std::min<std::uint32_t>(chunk_classes_for(payload_bytes).front().count, 256);
}

/// A node in `domain_id` whose pool holds `chunks`: sized for what it
/// publishes, or (empty) a small one for a node that only subscribes.
inline axon::NodeOptions node_in_domain(std::uint32_t domain_id, std::vector<axon::ChunkClassConfig> chunks = {}) {
  axon::NodeOptions options;
  options.domain_id = domain_id;
  options.chunk_classes =
      chunks.empty() ? std::vector<axon::ChunkClassConfig>{{.payload_bytes = 256, .count = 16}} : std::move(chunks);
  return options;
}

/// What one worker sets up.
struct WorkerSpec {
  std::string node;             ///< The node's name.
  axon::NodeOptions options;    ///< Its domain and pool (node_in_domain()).
  std::string_view publishes;   ///< The topic it advertises; empty: none.
  std::string_view subscribes;  ///< The topic it subscribes; empty: none.
  /// Of that subscription; none: what the node's deployment config says.
  std::optional<axon::SubscriberQos> qos;
  std::uint32_t subscribers = 1;  ///< Subscribers its publisher waits for.
  /// false: return without waiting for the peers (across hosts, where
  /// discovery takes its time and the worker probes instead).
  bool await_peers = true;
};

/// A worker's node with its publisher and subscriber (null where the spec
/// names no topic).
template <class T>
struct Endpoints {
  std::shared_ptr<axon::Node> node;
  std::shared_ptr<axon::Publisher<T>> pub;
  std::shared_ptr<axon::Subscriber<T>> sub;
};

/// Polls `connected` every millisecond until it holds or kConnectTimeout passed.
template <class Condition>
bool wait_until(Condition connected) {
  const auto deadline = std::chrono::steady_clock::now() + kConnectTimeout;
  while (!connected()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

/// `error` with `what` failed in front of its message.
inline axon::Error failed(std::string_view what, const axon::Error& error) {
  return {error.code(), std::string(what) + ": " + std::string(error.message())};
}

inline axon::Result<std::shared_ptr<axon::Node>> create_node(const WorkerSpec& spec) {
  auto node = axon::Node::create(spec.node, spec.options);
  if (!node) {
    return failed("Node::create", node.error());
  }
  return node;
}

/// Creates the node, advertises and subscribes as `spec` says, and waits
/// until the publisher has its subscribers and the subscriber a publisher.
template <class T>
axon::Result<Endpoints<T>> set_up_worker(const WorkerSpec& spec) {
  auto node = create_node(spec);
  if (!node) {
    return node.error();
  }
  Endpoints<T> ends{.node = std::move(*node), .pub = nullptr, .sub = nullptr};
  if (!spec.publishes.empty()) {
    auto pub = ends.node->template advertise<T>(spec.publishes);
    if (!pub) {
      return failed("advertise", pub.error());
    }
    ends.pub = std::move(*pub);
  }
  if (!spec.subscribes.empty()) {
    auto sub = spec.qos ? ends.node->template subscribe<T>(spec.subscribes, *spec.qos)
                        : ends.node->template subscribe<T>(spec.subscribes);
    if (!sub) {
      return failed("subscribe", sub.error());
    }
    ends.sub = std::move(*sub);
  }
  if (spec.await_peers && !wait_until([&] {
        return (ends.pub == nullptr || ends.pub->subscriber_count() >= spec.subscribers) &&
               (ends.sub == nullptr || ends.sub->publisher_count() >= 1);
      })) {
    return axon::Error(axon::ErrorCode::kTimeout, "the peers did not connect within 10 s");
  }
  return ends;
}

/// Subscribes `spec.subscribes` on `node` with `callback`, adds it to
/// `executor` and waits until it has a publisher.
template <class T, class Callback>
axon::Result<std::shared_ptr<axon::CallbackSubscription<T>>> subscribe_in(axon::Node& node, const WorkerSpec& spec,
                                                                          axon::SingleThreadedExecutor& executor,
                                                                          Callback&& callback) {
  auto subscription = node.template subscribe<T>(spec.subscribes, spec.qos.value_or(axon::SubscriberQos{}),
                                                 std::forward<Callback>(callback));
  if (!subscription) {
    return failed("subscribe", subscription.error());
  }
  if (auto added = executor.add(*subscription); !added) {
    return failed("executor.add", added.error());
  }
  if (!wait_until([&] { return (*subscription)->subscriber().publisher_count() >= 1; })) {
    return axon::Error(axon::ErrorCode::kTimeout, "no publisher connected within 10 s");
  }
  return subscription;
}

}  // namespace axon_bench::workers
