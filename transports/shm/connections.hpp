// Connections of a publisher block to its subscribers: created under the
// domain lock by whoever connects (the publisher when it advertises, the
// subscriber when it appears), reclaimed by the one thread that pushes to
// the block.
#pragma once

#include <cstdint>

#include "axon/result.hpp"
#include "transports/shm/domain_lock.hpp"
#include "transports/shm/mapped_pool.hpp"
#include "transports/shm/registry.hpp"

namespace axon::shm {

/// Connects `subscriber` to publisher block `block` of `pool`, shaped by the
/// subscriber's registry entry (checked: another process wrote it).
/// `hand_over_history`: a subscriber connects itself; a transient-local
/// publisher then hands its history over before activating the connection.
/// `domain_id` only names the domain in the error. Allocates only for errors.
Result<Connection*> create_connection(const DomainLockGuard& held, const Registry& registry, std::uint32_t domain_id,
                                      MappedPool& pool, std::uint32_t block, SlotRef subscriber,
                                      bool hand_over_history);

/// Reclaims connection `bit` of `block` in `pool`: stops pushing to it, gives
/// back every chunk it held, frees it. Only the thread that pushes to the
/// block (its publisher, or the service thread once retired) may call it.
/// Returns the messages its subscriber rejected (Connection::rejected), for
/// the publisher's counters to keep.
std::uint64_t reclaim_connection(MappedPool& pool, std::uint32_t block, std::uint32_t bit) noexcept;

/// reclaim_connection() for every connection of `block` in state kClosing,
/// with the same rule on who may call it; returns the sum of what they return.
std::uint64_t reclaim_closing_connections(MappedPool& pool, std::uint32_t block) noexcept;

/// Whether `block` has a connection in state kClosing (its reclaimer's view).
bool has_closing_connection(const MappedPool& pool, const PublisherBlock& block) noexcept;

}  // namespace axon::shm
