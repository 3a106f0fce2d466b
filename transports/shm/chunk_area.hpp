// Where this node's chunks lie in its own mapping, for a layer that registers
// them with a network card (transports/rdma/pool_registration.hpp): the
// chunks only, from the first chunk header to the end of the last chunk.
// The pool segment's head, publisher blocks, connections and queue slots
// before them (PoolLayout) and the ChunkPool directory (the free-list heads)
// are not part of it, so none of them can be made remotely writable.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "transports/shm/chunk_pool.hpp"
#include "transports/shm/shm_constants.hpp"

namespace axon::shm {

/// One chunk class inside the area.
struct ChunkClassExtent {
  std::uint32_t payload_capacity = 0;  ///< Bytes of payload per chunk.
  std::uint32_t chunk_count = 0;
  std::uint32_t stride = 0;        ///< Header + payload bytes: chunk k starts at first_offset + k * stride.
  std::uint64_t first_offset = 0;  ///< Of the class's first chunk header, from ChunkArea::base.
};

/// The chunks of a pool as this process maps them. A plain value: it stays
/// valid while the pool is mapped (the transport's life).
struct ChunkArea {
  std::byte* base = nullptr;  ///< The first chunk's header.
  std::size_t bytes = 0;      ///< Up to the end of the last chunk.
  std::uint32_t class_count = 0;
  std::array<ChunkClassExtent, kMaxSizeClasses> classes{};

  [[nodiscard]] std::span<const ChunkClassExtent> class_list() const noexcept { return {classes.data(), class_count}; }
};

/// Where the chunks of `pool` lie in this mapping, from its directory: for a
/// pool this process formatted (its own), whose classes follow each other.
/// Not on the data path.
[[nodiscard]] inline ChunkArea chunk_area_of(const ChunkPool& pool) noexcept {
  const std::uint32_t count = pool.class_count();
  const SizeClass& last = pool.size_class(count - 1);
  auto* const first = reinterpret_cast<std::byte*>(pool.chunk_by_index(0));
  auto* const last_first = reinterpret_cast<std::byte*>(pool.chunk_by_index(last.first_index));
  ChunkArea area{.base = first,
                 .bytes = static_cast<std::size_t>(last_first - first) + std::size_t{last.stride} * last.chunk_count,
                 .class_count = count};
  for (std::uint32_t i = 0; i < count; ++i) {
    const SizeClass& sc = pool.size_class(i);
    const auto* const class_first = reinterpret_cast<const std::byte*>(pool.chunk_by_index(sc.first_index));
    area.classes[i] = {.payload_capacity = sc.payload_capacity,
                       .chunk_count = sc.chunk_count,
                       .stride = sc.stride,
                       .first_offset = static_cast<std::uint64_t>(class_first - first)};
  }
  return area;
}

}  // namespace axon::shm
