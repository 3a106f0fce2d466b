// A hash of everything that shapes the shared-memory layout, stored in every
// segment header: processes built differently refuse each other's segments.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transports/shm/chunk_header.hpp"
#include "transports/shm/chunk_pool.hpp"
#include "transports/shm/pool_segment.hpp"
#include "transports/shm/registry_layout.hpp"

namespace axon::shm {

constexpr std::uint64_t fnv1a_mix(std::uint64_t hash, std::uint64_t value) noexcept {
  for (int i = 0; i < 8; ++i) {
    hash ^= (value >> (i * 8)) & 0xFFU;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

constexpr std::uint64_t layout_abi_hash() noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const std::uint64_t v :
       {std::uint64_t{kLayoutVersion}, std::uint64_t{sizeof(void*)}, std::uint64_t{sizeof(ChunkHeader)},
        std::uint64_t{offsetof(ChunkHeader, next_free)}, std::uint64_t{offsetof(ChunkHeader, publish_time_ns)},
        std::uint64_t{sizeof(SizeClass)}, std::uint64_t{sizeof(PoolDirectory)}, std::uint64_t{sizeof(Connection)},
        std::uint64_t{sizeof(QueueSlot)}, std::uint64_t{sizeof(PublisherBlock)}, std::uint64_t{sizeof(PoolSegment)},
        std::uint64_t{sizeof(ParticipantEntry)}, std::uint64_t{sizeof(TopicEntry)},
        std::uint64_t{sizeof(EndpointEntry)}, std::uint64_t{sizeof(RegistrySegment)}, std::uint64_t{kRingCapacity},
        std::uint64_t{kMaxSubscribersPerPublisher}, std::uint64_t{offsetof(Connection, rejected)}}) {
    h = fnv1a_mix(h, v);
  }
  return h;
}

}  // namespace axon::shm
