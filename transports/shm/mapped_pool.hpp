// A chunk pool segment mapped into this process: this node's own (created
// here, a memfd) or a peer's (mapped from a descriptor it handed us).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "axon/result.hpp"
#include "transports/shm/chunk_pool.hpp"
#include "transports/shm/pool_segment.hpp"
#include "transports/shm/registry.hpp"
#include "transports/shm/segment.hpp"
#include "transports/shm/shm_config.hpp"

namespace axon::shm {

/// A mapped pool segment, ours or a peer's. Shared by every port that uses
/// it; unmapped when the last one lets go.
struct MappedPool {
  MappedSegment mapping;
  PoolSegment* segment = nullptr;
  ChunkPool pool;
  SlotRef owner;
  bool owner_is_local = false;  ///< Owned by a node of this process.
  /// Where the blocks, connections and queue slots lie, checked against the
  /// mapping when it was made: process-local, so an index checked against
  /// `layout.publisher_blocks` or `layout.connections` stays inside its table
  /// whatever others write.
  PoolLayout layout;
  PublisherBlock* blocks = nullptr;
  Connection* connections = nullptr;
  RingSlots<RingEntry> queue_slots;

  /// The pool's publisher blocks (its owner's pool.publishers).
  [[nodiscard]] std::uint32_t block_count() const noexcept { return layout.publisher_blocks; }
  /// Block `index`; the caller checked index < block_count().
  [[nodiscard]] PublisherBlock& block(std::uint32_t index) const noexcept { return blocks[index]; }

  [[nodiscard]] std::uint32_t connection_count() const noexcept { return layout.connections; }
  /// Connection `index`; the caller checked index < connection_count().
  [[nodiscard]] Connection& connection(std::uint32_t index) const noexcept { return connections[index]; }
  [[nodiscard]] std::uint32_t index_of(const Connection& conn) const noexcept {
    return static_cast<std::uint32_t>(&conn - connections);
  }
};

/// Key of a participant's pool in PeerPools.
inline std::uint64_t pool_key(SlotRef owner) noexcept { return (std::uint64_t{owner.slot} << 32) | owner.generation; }

/// Creates, formats and maps the pool of participant `self` (a memfd), and
/// lists it for the other nodes of this process (local_pool()).
/// `incarnation`: the registry's. Slow path: system calls, allocation.
Result<std::shared_ptr<MappedPool>> create_own_pool(const ShmConfig& config, SlotRef self, std::uint64_t incarnation);

/// The pool of `owner` if a node of this process owns it (one mapping per
/// pool and process: one address per chunk keeps ThreadSanitizer's view
/// exact); nullptr otherwise. Any thread; a process-wide mutex.
std::shared_ptr<MappedPool> local_pool(const ShmConfig& config, std::uint64_t incarnation, SlotRef owner);

/// Maps and checks the pool descriptor `fd` (ours to close) that `from`
/// claimed to be `owner`'s, with this node's memory options. Any thread.
Result<std::shared_ptr<MappedPool>> map_peer_pool(const ShmConfig& config, SlotRef owner, int fd,
                                                  const std::string& from);

}  // namespace axon::shm
