// Options of nodes, publishers and subscribers: structs with defaults, filled
// with designated initializers.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
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

/// When a subscriber checks messages (FlatBuffers) before user code sees them.
enum class Verification : std::uint8_t {
  kCrossProcess,  ///< Messages written by another process (the default).
  kAlways,
  kNever,  ///< Trust every writer: for the last microseconds on a closed system.
};

struct PublisherQos {
  /// Largest payload this publisher will send (0: sizeof(T) for raw structs,
  /// the largest chunk class for variable-size messages).
  std::uint64_t max_payload_bytes = 0;
  /// Fail advertise() unless the topic's data path is zero copy.
  bool require_zero_copy = false;
  /// Accept a topic whose FlatBuffers/Protobuf schema hash differs when the
  /// type name is the same (schema evolution by the format's own rules).
  bool allow_compatible_evolution = false;
};

struct SubscriberQos {
  /// Messages queued for this subscriber at most (1..256).
  std::uint32_t depth = 16;
  Overflow overflow = Overflow::kRejectNewest;
  /// With kBlockPublisher: how long a publisher waits for room.
  std::int64_t block_timeout_ns = 100'000'000;
  /// Samples this subscriber may hold at once (taken, not yet dropped; at
  /// most 64 for decoding serializers such as Protobuf).
  std::uint32_t max_held_samples = 64;
  /// Fail subscribe() unless the topic's data path is zero copy.
  bool require_zero_copy = false;
  /// See PublisherQos::allow_compatible_evolution.
  bool allow_compatible_evolution = false;
  Verification verification = Verification::kCrossProcess;
};

}  // namespace axon
