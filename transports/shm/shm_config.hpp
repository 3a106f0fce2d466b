// What a node's shared-memory transport is configured with.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "transports/shm/chunk_pool.hpp"
#include "transports/shm/pool_segment.hpp"
#include "transports/shm/registry_layout.hpp"

namespace axon::shm {

struct ShmConfig {
  std::uint32_t domain_id = 0;
  std::string node_name;
  std::string shm_dir = "/dev/shm";
  mode_t file_mode = 0600;
  std::string group;
  std::vector<ChunkClassConfig> chunk_classes;
  /// How far this node's loans fall through to larger classes.
  ChunkFallback chunk_fallback;
  std::uint32_t liveness_period_ms = 50;
  /// The registry tables this node creates the domain with when it is the
  /// first; a later joiner that asks for others is refused. Unset: the
  /// defaults when creating, whatever the domain has when joining.
  std::optional<RegistryLimits> limits;
  /// Publisher blocks of this node's pool: the publishers it may have at
  /// once (pool.publishers, 1..kMaxPublishersPerNode).
  std::uint32_t publisher_blocks = kDefaultPublishersPerNode;
  /// Entries of this node's connection table (pool.connections) and queue
  /// slots its rings share (pool.queue_slots); see pool_segment.hpp.
  std::uint32_t connections = kDefaultConnectionsPerNode;
  std::uint32_t queue_slots = kDefaultQueueSlotsPerNode;
  /// NodeOptions::prefault_memory, lock_memory, huge_pages (memory_options.hpp).
  bool prefault_memory = false;
  bool lock_memory = false;
  bool huge_pages = false;
};

}  // namespace axon::shm
