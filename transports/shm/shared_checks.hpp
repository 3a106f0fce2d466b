// Checks of values that other processes write into shared memory (registry
// entries, a pool's blocks and connections) before this process uses them as
// an index, a size or a shift. A value that fails is reported once per kind
// and its entry skipped: a stray write in a shared file must cost at most
// that entry, never a crash of every process that reads it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "transports/shm/pool_segment.hpp"
#include "transports/shm/registry_layout.hpp"
#include "transports/shm/shm_constants.hpp"

namespace axon::shm {

/// What kind of shared value was found corrupt; each is logged once per process.
enum class Corruption : std::uint32_t {
  kPublisherEntry = 0,
  kSubscriberEntry,
  kConnection,
  kConnectionIndex,
  kBlockBits,
  kCount,
};

/// Why a publisher entry of the registry cannot be used, or "" when it can.
/// Only the fields this process uses as indices are checked, against the
/// domain's `limits` (this process's copy); pool_block only against the
/// largest pool, since the publisher's own pool.publishers is known once its
/// pool is mapped (invalid_block_index()).
inline std::string_view invalid_publisher_entry(const EndpointEntry& e, const RegistryLimits& limits) noexcept {
  if (e.topic >= limits.topics)
    return "its topic index is out of range";
  if (e.participant >= limits.participants)
    return "its participant index is out of range";
  if (e.pool_block >= kMaxPublishersPerNode)
    return "its pool_block is out of range";
  return {};
}

/// The same for a subscriber entry (depth and overflow become a ring limit
/// and a policy in a publisher's pool).
inline std::string_view invalid_subscriber_entry(const EndpointEntry& e, const RegistryLimits& limits) noexcept {
  if (e.topic >= limits.topics)
    return "its topic index is out of range";
  if (e.participant >= limits.participants)
    return "its participant index is out of range";
  if (e.depth == 0 || e.depth > kRingCapacity)
    return "its depth is not 1..256";
  if (e.overflow > 4)
    return "its overflow policy is unknown";  // axon::Overflow has five values
  if (e.block_timeout_ns < 0 || e.quarantine_after_ns < 0)
    return "a timeout is negative";
  return {};
}

/// Why `block` cannot index the publisher blocks of a pool with
/// `block_count` of them (MappedPool::block_count(), the owner's stored count
/// checked when the pool was mapped), or "" when it can.
inline std::string_view invalid_block_index(std::uint32_t block, std::uint32_t block_count) noexcept {
  if (block >= block_count || block >= kMaxPublishersPerNode)
    return "its block index is beyond the pool's publisher blocks (pool.publishers)";
  return {};
}

/// The same for a connection of a pool with `block_count` publisher blocks
/// (written by the process that created it).
inline std::string_view invalid_connection(const Connection& c, const RegistryLimits& limits,
                                           std::uint32_t block_count) noexcept {
  if (const std::string_view why = invalid_block_index(c.block, block_count); !why.empty())
    return why;
  if (c.bit >= kMaxSubscribersPerPublisher)
    return "its bit is out of range";
  if (c.subscriber_slot >= limits.subscribers)
    return "its subscriber slot is out of range";
  return {};
}

/// Logs `what` as an error the first time `kind` is reported in this process
/// (later reports of the same kind are counted, not logged, so a corrupt
/// entry met on every round does not flood the log). Slow path: allocates.
void report_corruption(Corruption kind, const std::string& what) noexcept;

/// How often `kind` was reported in this process (tests).
[[nodiscard]] std::uint64_t corruption_reports(Corruption kind) noexcept;

}  // namespace axon::shm
