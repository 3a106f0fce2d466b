#include "transports/shm/endpoint_limits.hpp"

#include <fmt/format.h>

#include <cstring>

#include "transports/shm/pool_segment.hpp"
#include "transports/shm/shm_ports.hpp"

namespace axon::shm {
namespace {

constexpr std::uint32_t kMaxLinks = ShmSubscriberPort::kMaxLinks;

/// A participant's name as another process wrote it: never read past the field.
std::string_view name_of(const DomainLockGuard& held, const Registry& registry, std::uint32_t participant) noexcept {
  if (participant >= kMaxParticipants) {
    return "?";
  }
  const ParticipantEntry& p = registry.participant(held, participant);
  return {p.name, ::strnlen(p.name, sizeof(p.name))};
}

}  // namespace

Result<void> check_subscribe_limits(const DomainLockGuard& held, const Registry& registry, std::uint32_t topic,
                                    std::string_view topic_name) {
  const EndpointCounts counts = registry.count_endpoints(held);
  const std::uint32_t publishers = counts.publishers[topic];
  const std::uint32_t subscribers = counts.subscribers[topic];
  if (publishers > kMaxLinks) {
    return Error(ErrorCode::kLimitReached,
                 fmt::format("topic '{}' has {} publishers; a subscriber reads from at most {}: drop a publisher "
                             "of '{}' or split the topic",
                             topic_name, publishers, kMaxLinks, topic_name));
  }
  // A new subscriber adds one connection to the pool of each publisher's
  // node: check every node that publishes the topic.
  std::array<std::uint32_t, kMaxParticipants> added{};
  std::uint32_t some_publisher_node = kMaxParticipants;
  for (std::uint32_t p = 0; p < kMaxPublishers; ++p) {
    const EndpointEntry& pub = registry.publisher(held, p);
    if (pub.state == EntryState::kActive && pub.topic == topic && pub.participant < kMaxParticipants) {
      ++added[pub.participant];
      some_publisher_node = pub.participant;
    }
  }
  // Without a publisher nobody needs a connection yet; a publisher that
  // comes later is refused by check_advertise_limits() instead.
  if (some_publisher_node < kMaxParticipants && subscribers >= kMaxSubscribersPerPublisher) {
    return Error(ErrorCode::kLimitReached,
                 fmt::format("topic '{}' has {} subscribers connected to the publisher of node '{}'; a publisher "
                             "serves at most {}: drop a subscriber of '{}' or split the topic",
                             topic_name, subscribers, name_of(held, registry, some_publisher_node),
                             kMaxSubscribersPerPublisher, topic_name));
  }
  for (std::uint32_t n = 0; n < kMaxParticipants; ++n) {
    if (added[n] != 0 && counts.connections[n] + added[n] > kMaxConnectionsPerNode) {
      return Error(ErrorCode::kLimitReached,
                   fmt::format("node '{}' publishes topic '{}' and its pool serves {} connections (publisher x "
                               "subscriber pairs) already; a node serves at most {}: drop subscribers of that "
                               "node's topics, or publish some of them from another node",
                               name_of(held, registry, n), topic_name, counts.connections[n], kMaxConnectionsPerNode));
    }
  }
  return {};
}

Result<void> check_advertise_limits(const DomainLockGuard& held, const Registry& registry, std::uint32_t topic,
                                    std::string_view topic_name, std::uint32_t self, std::string_view node_name) {
  const EndpointCounts counts = registry.count_endpoints(held);
  const std::uint32_t publishers = counts.publishers[topic];
  const std::uint32_t subscribers = counts.subscribers[topic];
  if (publishers >= kMaxLinks) {
    return Error(ErrorCode::kLimitReached,
                 fmt::format("topic '{}' has {} publishers; a subscriber reads from at most {}: drop a publisher "
                             "of '{}' or split the topic",
                             topic_name, publishers, kMaxLinks, topic_name));
  }
  if (subscribers > kMaxSubscribersPerPublisher) {
    return Error(
        ErrorCode::kLimitReached,
        fmt::format("topic '{}' has {} subscribers; a publisher serves at most {}: drop subscribers "
                    "of '{}' until {} are left, or split the topic",
                    topic_name, subscribers, kMaxSubscribersPerPublisher, topic_name, kMaxSubscribersPerPublisher));
  }
  if (counts.connections[self] + subscribers > kMaxConnectionsPerNode) {
    return Error(
        ErrorCode::kLimitReached,
        fmt::format("node '{}' serves {} connections (publisher x subscriber pairs), and a publisher of "
                    "topic '{}' adds {} (its subscribers); a node serves at most {}: drop subscribers "
                    "of this node's topics, or advertise '{}' from another node",
                    node_name, counts.connections[self], topic_name, subscribers, kMaxConnectionsPerNode, topic_name));
  }
  return {};
}

}  // namespace axon::shm
