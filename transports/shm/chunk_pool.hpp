// Fixed-size chunk classes, each a lock-free free list, laid out in one
// shared-memory region. Processes that map the region at different addresses
// share it: everything inside is an offset, never a pointer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "axon/options.hpp"
#include "axon/result.hpp"
#include "transports/shm/chunk_header.hpp"
#include "transports/shm/holder_bits.hpp"
#include "transports/shm/shm_constants.hpp"

namespace axon::shm {

/// One size class in shared memory. The head of the free list is a tagged
/// pointer: low 32 bits chunk index (kNilIndex = empty), high 32 bits a
/// version bumped by every successful CAS, so a pop that read a stale `next`
/// fails instead of corrupting the list (no ABA).
struct alignas(kCacheLine) SizeClass {
  std::atomic<std::uint64_t> free_head{0};
  std::uint32_t payload_capacity = 0;  ///< Bytes, a multiple of the cache line.
  std::uint32_t chunk_count = 0;
  std::uint32_t first_index = 0;   ///< Index of its first chunk over the pool.
  std::uint32_t stride = 0;        ///< Header + payload bytes.
  std::uint64_t first_offset = 0;  ///< From the pool directory's base.
};

/// The part of a pool segment that describes its classes.
struct PoolDirectory {
  std::uint32_t class_count = 0;
  std::uint32_t total_chunks = 0;
  std::uint64_t chunk_area_bytes = 0;
  SizeClass classes[kMaxSizeClasses];
};

/// A view of a pool in mapped memory: the directory and the chunk area that
/// follows it at `chunk_area_offset()`.
///
/// Thread safety: allocate() and release() may be called from any thread of
/// any process that maps the pool, concurrently. They never allocate heap
/// memory, lock or make system calls.
class ChunkPool {
 public:
  static constexpr std::uint32_t kNilIndex = 0xFFFFFFFFU;

  ChunkPool() = default;

  /// Bytes a pool with `classes` needs, directory included.
  static Result<std::size_t> bytes_needed(std::span<const ChunkClassConfig> classes);

  /// Lays out and fills a pool at `base` (size from bytes_needed()). Only the
  /// creator calls this, before anyone else can see the memory.
  static ChunkPool format(std::byte* base, std::span<const ChunkClassConfig> classes) noexcept;

  /// A view of a pool that another process formatted; checks that every
  /// class lies inside `bytes`.
  static Result<ChunkPool> attach(std::byte* base, std::size_t bytes);

  /// Pops a free chunk from the smallest class that fits `payload_bytes`,
  /// trying larger classes when that one is empty, as far as `fallback`
  /// allows (without one: every larger class); its holder mask is set to
  /// kLoanBit. nullptr when none is free.
  ChunkHeader* allocate(std::size_t payload_bytes) noexcept;
  ChunkHeader* allocate(std::size_t payload_bytes, const ChunkFallback& fallback) noexcept;

  /// The classes allocate() may take a chunk of for `payload_bytes`:
  /// [first, last]; first == class_count() when none fits.
  struct ClassRange {
    std::uint32_t first = 0;
    std::uint32_t last = 0;
  };
  [[nodiscard]] ClassRange classes_for(std::size_t payload_bytes, const ChunkFallback& fallback) const noexcept;

  /// Pushes a chunk whose holder mask is zero back on its class's free list.
  void release(ChunkHeader* chunk) noexcept;

  /// Clears `bits` in word 0 of the chunk's holder ledger; returns the chunk
  /// to its free list when that made the ledger empty (word 0 zero and no
  /// wide holder left). Returns whether it freed the chunk.
  bool drop_holders(ChunkHeader* chunk, std::uint64_t bits) noexcept;
  /// Clears `bits` in wide word `word` (1..kHolderWords-1) and takes the bits
  /// it did clear off the wide count (a bit already clear counts nothing, so
  /// a reclaimer and a holder may both drop it); frees the chunk when that
  /// brought the count to zero. Returns whether it freed the chunk.
  bool drop_wide_holders(ChunkHeader* chunk, std::uint32_t word, std::uint64_t bits) noexcept;
  /// The hold of one connection, wherever its bit lives.
  bool drop_holder(ChunkHeader* chunk, HolderBit bit) noexcept {
    return bit.word == 0 ? drop_holders(chunk, bit.mask) : drop_wide_holders(chunk, bit.word, bit.mask);
  }
  /// The holds of `connections` (word 0 last).
  bool drop_connections(ChunkHeader* chunk, const ConnectionSet& connections) noexcept;

  /// publish(): the chunk, the caller's alone until the first push, is held
  /// by `own_bits` (loan, history, network) and `connections` from now on.
  /// The wide words and count are stored before word 0's release store, so a
  /// subscriber that acquires the ring entry (pushed after this) sees them.
  static void set_holders(ChunkHeader* chunk, std::uint64_t own_bits, const ConnectionSet& connections) noexcept;
  /// Adds one connection's hold to a published chunk (a late joiner gets the
  /// history). Only the thread that pushes to the chunk's publisher block,
  /// and only while word 0 stays set (the history bit keeps it).
  static void add_holder(ChunkHeader* chunk, HolderBit bit) noexcept;
  /// Whether the publisher's loan bit is all that holds the chunk (acquire:
  /// the other holders' reads of it are over).
  [[nodiscard]] static bool only_loan_left(const ChunkHeader* chunk) noexcept;
  /// Whether a wide connection holds the chunk, given word 0 as `holders`
  /// (statistics: acquire, a snapshot that sees the holders' releases).
  [[nodiscard]] static bool held_wide(const ChunkHeader* chunk, std::uint64_t holders) noexcept {
    return chunk->wide_holders.load(std::memory_order_acquire) > (holders != 0 ? 1U : 0U);  // beyond word 0's share
  }

  [[nodiscard]] std::byte* payload(ChunkHeader* chunk) const noexcept {
    return reinterpret_cast<std::byte*>(chunk) + sizeof(ChunkHeader);
  }
  [[nodiscard]] std::uint64_t offset_of(const ChunkHeader* chunk) const noexcept {
    return static_cast<std::uint64_t>(reinterpret_cast<const std::byte*>(chunk) - base_);
  }
  /// Whether `chunk` points into this pool's chunk area (address only).
  [[nodiscard]] bool contains(const ChunkHeader* chunk) const noexcept {
    const auto at = reinterpret_cast<std::uintptr_t>(chunk);
    const auto base = reinterpret_cast<std::uintptr_t>(base_);
    return at >= base + sizeof(PoolDirectory) && at < base + dir_->chunk_area_bytes;
  }
  /// The chunk at `offset`, or nullptr when the offset is not a chunk start
  /// (corrupted or foreign data must never be dereferenced).
  [[nodiscard]] ChunkHeader* chunk_at(std::uint64_t offset) const noexcept;
  /// The chunk with `index`, or nullptr when there is none. Reads only the
  /// pool's directory (not the chunk's header).
  [[nodiscard]] ChunkHeader* chunk_by_index(std::uint32_t index) const noexcept;
  /// Payload capacity of the chunk with `index` (0 when there is none), from
  /// the directory alone.
  [[nodiscard]] std::uint32_t capacity_of(std::uint32_t index) const noexcept;
  /// The size class allocate() tries first for `payload_bytes`.
  [[nodiscard]] std::uint32_t class_for(std::size_t payload_bytes) const noexcept;

  [[nodiscard]] std::uint32_t class_count() const noexcept { return dir_->class_count; }
  [[nodiscard]] std::uint32_t total_chunks() const noexcept { return dir_->total_chunks; }
  [[nodiscard]] const SizeClass& size_class(std::uint32_t i) const noexcept { return dir_->classes[i]; }
  [[nodiscard]] std::size_t largest_payload() const noexcept;
  /// Chunks of class `i` that are free or wait unused in a publisher's reuse
  /// cache (exact when quiescent).
  [[nodiscard]] std::uint32_t free_chunks(std::uint32_t i) const noexcept;

  [[nodiscard]] bool valid() const noexcept { return dir_ != nullptr; }

 private:
  ChunkPool(std::byte* base, PoolDirectory* dir) noexcept : base_(base), dir_(dir) {}
  ChunkHeader* pop(SizeClass& sc) noexcept;

  std::byte* base_ = nullptr;  ///< Address of the directory; offsets count from here.
  PoolDirectory* dir_ = nullptr;
};

}  // namespace axon::shm
