// `pool: {chunk_classes: auto}`: a node's chunk classes derived from the
// topics it publishes (its `publishes:` list), from each topic's
// max_payload_bytes, rate_hz and QoS. The rule (docs/configuration.md, "Pool
// sized from the topics"):
//   per topic: a class of max_payload_bytes (rounded up to 64 B, as the pool
//   rounds), with max(floor, held, reserved_chunks) chunks, where held = the
//   subscribers' queue depth + the durability history + 1 (the loan being
//   written) + the messages of kHoldWindowMs at rate_hz (samples subscribers
//   took and still hold);
//   topics of one size share a class (counts added); more than 16 sizes are
//   merged, the smaller class into the next larger one, where that costs the
//   least memory, until 16 remain.
// Not public API.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "axon/deployment_config.hpp"
#include "axon/options.hpp"

namespace axon::detail {

/// Fewest chunks a topic gets, whatever its QoS and rate.
inline constexpr std::uint32_t kMinChunksPerTopic = 4;
/// How long subscribers are assumed to hold the samples they took.
inline constexpr std::uint32_t kHoldWindowMs = 100;
/// Classes of one pool (kMaxSizeClasses of transports/shm).
inline constexpr std::size_t kMaxDerivedClasses = 16;

/// What one published topic needs of its node's pool.
struct TopicDemand {
  std::string topic;
  std::uint64_t payload_bytes = 0;  ///< max_payload_bytes
  std::uint64_t chunks = 0;         ///< chunks_held()
};

/// The classes derived for a node; topics[i] names the topics classes[i] serves.
/// Counts above ChunkClassConfig's range are the caller's to refuse (`chunks`).
struct DerivedPool {
  std::vector<ChunkClassConfig> classes;
  std::vector<std::uint64_t> chunks;
  std::vector<std::vector<std::string>> topics;
};

/// What a chunk of a class of `payload_bytes` holds: the pool rounds every
/// class up to whole cache lines (64 B, chunk_pool.cpp).
[[nodiscard]] constexpr std::uint64_t rounded_payload_bytes(std::uint64_t payload_bytes) noexcept {
  return (payload_bytes + 63) / 64 * 64;
}

/// Chunks one publisher of `topic` holds at once (the rule above).
[[nodiscard]] std::uint64_t chunks_held(const TopicConfig& topic);

/// Classes for `demands` (any order; payload_bytes > 0): at most 16, sizes
/// growing strictly. Allocates.
[[nodiscard]] DerivedPool derive_chunk_classes(std::vector<TopicDemand> demands);

/// "4096 B x 22 (perception/objects, planning/trajectory), 2 MiB x 8 (camera);
/// 17.1 MiB in all": what the log says a node with chunk_classes: auto got.
[[nodiscard]] std::string describe_derived_pool(const NodeConfig& node);

}  // namespace axon::detail
