#include "transports/shm/endpoint_limits.hpp"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "transports/shm/pool_segment.hpp"

namespace axon::shm {
namespace {

/// A participant's name as another process wrote it: never read past the field.
std::string_view name_of(const DomainLockGuard& held, const Registry& registry, std::uint32_t participant) noexcept {
  if (participant >= registry.limits().participants) {
    return "?";
  }
  const ParticipantEntry& p = registry.participant(held, participant);
  return {p.name, ::strnlen(p.name, sizeof(p.name))};
}

/// A topic with more publishers than one subscriber reads from: the error
/// names the domain's key that raises it.
Result<void> too_many_publishers(std::string_view topic_name, std::uint32_t publishers, std::uint32_t limit) {
  return Error(ErrorCode::kLimitReached,
               fmt::format("topic '{}' has {} publishers, and a subscriber of this domain reads from at most {}: "
                           "raise limits.publishers_per_topic in the deployment file (or NodeOptions::"
                           "domain_limits.publishers_per_topic) of every node of the domain, drop a publisher of "
                           "'{}', or split the topic",
                           topic_name, publishers, limit, topic_name));
}

}  // namespace

Result<void> check_subscribe_limits(const DomainLockGuard& held, const Registry& registry, std::uint32_t topic,
                                    std::string_view topic_name, std::uint32_t depth) {
  const EndpointCounts counts = registry.count_endpoints(held);
  const std::uint32_t publishers = counts.publishers[topic];
  const std::uint32_t subscribers = counts.subscribers[topic];
  if (publishers > registry.limits().publishers_per_topic) {
    return too_many_publishers(topic_name, publishers, registry.limits().publishers_per_topic);
  }
  // A new subscriber adds one connection to the pool of each publisher's
  // node: check every node that publishes the topic.
  const RegistryLimits& limits = registry.limits();
  std::vector<std::uint32_t> added(limits.participants);
  std::uint32_t some_publisher_node = limits.participants;
  for (std::uint32_t p = 0; p < limits.publishers; ++p) {
    const EndpointEntry& pub = registry.publisher(held, p);
    if (pub.state == EntryState::kActive && pub.topic == topic && pub.participant < limits.participants) {
      ++added[pub.participant];
      some_publisher_node = pub.participant;
    }
  }
  // Without a publisher nobody needs a connection yet; a publisher that
  // comes later is refused by check_advertise_limits() instead.
  if (some_publisher_node < limits.participants && subscribers >= kMaxSubscribersPerPublisher) {
    return Error(ErrorCode::kLimitReached,
                 fmt::format("topic '{}' has {} subscribers connected to the publisher of node '{}'; a publisher "
                             "serves at most {}, the width of a chunk's holder ledger (a build constant of the "
                             "shared-memory layout, not a setting): split '{}' into topics of at most {} "
                             "subscribers each, each with a publisher of its own, or drop a subscriber",
                             topic_name, subscribers, name_of(held, registry, some_publisher_node),
                             kMaxSubscribersPerPublisher, topic_name, kMaxSubscribersPerPublisher));
  }
  for (std::uint32_t n = 0; n < limits.participants; ++n) {
    const std::uint32_t limit = registry.participant(held, n).connections;
    if (added[n] != 0 && counts.connections[n] + added[n] > limit) {
      return Error(ErrorCode::kLimitReached,
                   fmt::format("node '{}' publishes topic '{}' and its pool serves {} connections (publisher x "
                               "subscriber pairs) already, of its pool.connections {}: raise pool.connections of "
                               "node '{}' in the config (or NodeOptions::pool_connections), drop subscribers of "
                               "that node's topics, or publish some of them from another node",
                               name_of(held, registry, n), topic_name, counts.connections[n], limit,
                               name_of(held, registry, n)));
    }
    const std::uint32_t slots = registry.participant(held, n).queue_slots;
    const std::uint64_t needed = std::uint64_t{added[n]} * queue_slots_for_depth(depth);
    if (added[n] != 0 && counts.queue_slots[n] + needed > slots) {
      return Error(ErrorCode::kLimitReached,
                   fmt::format("node '{}' publishes topic '{}' and its subscriber queues take {} of its "
                               "pool.queue_slots {}; a subscriber of depth {} needs {} more: raise pool.queue_slots "
                               "of node '{}' in the config (or NodeOptions::pool_queue_slots), or lower the depth",
                               name_of(held, registry, n), topic_name, counts.queue_slots[n], slots, depth, needed,
                               name_of(held, registry, n)));
    }
  }
  return {};
}

Result<void> check_advertise_limits(const DomainLockGuard& held, const Registry& registry, std::uint32_t topic,
                                    std::string_view topic_name, std::uint32_t self, std::string_view node_name) {
  const EndpointCounts counts = registry.count_endpoints(held);
  const std::uint32_t publishers = counts.publishers[topic];
  const std::uint32_t subscribers = counts.subscribers[topic];
  if (publishers >= registry.limits().publishers_per_topic) {
    return too_many_publishers(topic_name, publishers, registry.limits().publishers_per_topic);
  }
  if (subscribers > kMaxSubscribersPerPublisher) {
    return Error(
        ErrorCode::kLimitReached,
        fmt::format("topic '{}' has {} subscribers; a publisher serves at most {}, the width of a chunk's holder "
                    "ledger (a build constant of the shared-memory layout, not a setting): split '{}' into topics "
                    "of at most {} subscribers each, each with a publisher of its own, or drop subscribers",
                    topic_name, subscribers, kMaxSubscribersPerPublisher, topic_name, kMaxSubscribersPerPublisher));
  }
  const bool known = self < registry.limits().participants;
  const std::uint32_t limit = known ? registry.participant(held, self).connections : 0;
  const std::uint32_t connections = known ? counts.connections[self] : 0;
  if (connections + subscribers > limit) {
    return Error(ErrorCode::kLimitReached,
                 fmt::format("node '{}' serves {} connections (publisher x subscriber pairs), and a publisher of "
                             "topic '{}' adds {} (its subscribers); its pool.connections is {}: raise "
                             "pool.connections of node '{}' in the config (or NodeOptions::pool_connections), drop "
                             "subscribers of this node's topics, or advertise '{}' from another node",
                             node_name, connections, topic_name, subscribers, limit, node_name, topic_name));
  }
  const std::uint32_t slots = known ? registry.participant(held, self).queue_slots : 0;
  const std::uint32_t queue_slots = known ? counts.queue_slots[self] : 0;
  if (std::uint64_t{queue_slots} + counts.subscriber_queue_slots[topic] > slots) {
    return Error(
        ErrorCode::kLimitReached,
        fmt::format("node '{}' has {} of its pool.queue_slots {} in subscriber queues, and a publisher of "
                    "topic '{}' needs {} more (its subscribers' depths, each rounded up to a power of two): "
                    "raise pool.queue_slots of node '{}' in the config (or NodeOptions::pool_queue_slots), "
                    "or lower those depths",
                    node_name, queue_slots, slots, topic_name, counts.subscriber_queue_slots[topic], node_name));
  }
  return {};
}

}  // namespace axon::shm
