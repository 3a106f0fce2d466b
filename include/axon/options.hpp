// Options of nodes, publishers and subscribers: structs with defaults, filled
// with designated initializers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace axon {

/// One chunk size class of a node's pool.
struct ChunkClassConfig {
  std::uint32_t payload_bytes = 0;  ///< Largest payload a chunk of this class holds.
  std::uint32_t count = 0;          ///< Chunks of this class.
};

/// Default classes: 256 B up to 16 MiB (about 61 MiB in all).
std::vector<ChunkClassConfig> default_chunk_classes();

struct NodeOptions {
  /// Independent systems on one host use different domains. Default: the
  /// AXON_DOMAIN environment variable, else 0.
  std::optional<std::uint32_t> domain_id;
  /// Chunk classes of this node's pool; empty means default_chunk_classes().
  std::vector<ChunkClassConfig> chunk_classes;
  /// Directory of the named registry segment. Default: AXON_SHM_DIR, else /dev/shm.
  std::string shm_dir;
  /// Mode of the named files this node creates (registry, socket).
  mode_t file_mode = 0600;
  /// Group given access when file_mode has group bits (empty: the user's group).
  std::string group;
  /// How often this node checks that its peers are alive.
  std::uint32_t liveness_period_ms = 50;
};

/// What a subscriber's queue does when it is full at publish time.
enum class Overflow : std::uint8_t {
  kRejectNewest,    ///< The new message is dropped for this subscriber (counted).
  kBlockPublisher,  ///< The publisher waits for room, at most block_timeout_ns.
};

struct PublisherQos {
  /// Largest payload this publisher will send (0: sizeof(T) for raw structs).
  std::uint64_t max_payload_bytes = 0;
};

struct SubscriberQos {
  /// Messages queued for this subscriber at most (1..1024).
  std::uint32_t depth = 16;
  Overflow overflow = Overflow::kRejectNewest;
  /// With kBlockPublisher: how long a publisher waits for room.
  std::int64_t block_timeout_ns = 100'000'000;
  /// Samples this subscriber may hold at once (taken, not yet dropped).
  std::uint32_t max_held_samples = 64;
};

}  // namespace axon
