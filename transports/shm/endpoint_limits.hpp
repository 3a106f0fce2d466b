// The connection limits of the shared-memory layout, checked when an endpoint
// is created: a subscriber or publisher that could not be connected to every
// peer of its topic is refused up front (kLimitReached, naming the limit and
// what to do) instead of being accepted and then never served.
#pragma once

#include <cstdint>
#include <string_view>

#include "axon/result.hpp"
#include "transports/shm/domain_lock.hpp"
#include "transports/shm/registry.hpp"

namespace axon::shm {

/// Whether a new subscriber of `topic` can be connected to every publisher
/// of it: a topic with a publisher has fewer than kMaxSubscribersPerPublisher
/// subscribers, at most the domain's limits.publishers_per_topic publishers, and no publisher's node
/// would exceed its pool.connections (ParticipantEntry::connections). Allocates only for the
/// error.
/// `depth`: the new subscriber's queue depth, whose queue slots (its power of
/// two) each publisher's node must have room for (pool.queue_slots).
Result<void> check_subscribe_limits(const DomainLockGuard& held, const Registry& registry, std::uint32_t topic,
                                    std::string_view topic_name, std::uint32_t depth);

/// Whether a new publisher of `topic` on participant `self` (node
/// `node_name`) can be connected to every subscriber of it: the topic has
/// fewer than limits.publishers_per_topic publishers, at most kMaxSubscribersPerPublisher
/// subscribers, and this node's pool would not exceed its pool.connections
/// connections nor its pool.queue_slots.
Result<void> check_advertise_limits(const DomainLockGuard& held, const Registry& registry, std::uint32_t topic,
                                    std::string_view topic_name, std::uint32_t self, std::string_view node_name);

}  // namespace axon::shm
