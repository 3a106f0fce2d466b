#include "transports/shm/chunk_pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <new>

namespace axon::shm {
namespace {

constexpr std::uint64_t kIndexMask = 0xFFFFFFFFULL;

constexpr std::uint64_t make_head(std::uint32_t index, std::uint32_t tag) noexcept {
  return (static_cast<std::uint64_t>(tag) << 32) | index;
}
constexpr std::uint32_t head_index(std::uint64_t head) noexcept {
  return static_cast<std::uint32_t>(head & kIndexMask);
}
constexpr std::uint32_t head_tag(std::uint64_t head) noexcept { return static_cast<std::uint32_t>(head >> 32); }

constexpr std::uint64_t round_up(std::uint64_t value, std::uint64_t to) noexcept { return (value + to - 1) / to * to; }

constexpr std::uint64_t directory_bytes() noexcept { return round_up(sizeof(PoolDirectory), kCacheLine); }

}  // namespace

Result<std::size_t> ChunkPool::bytes_needed(std::span<const ChunkClassConfig> classes) {
  if (classes.empty() || classes.size() > kMaxSizeClasses) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("a pool needs 1 to {} chunk classes, {} were given", kMaxSizeClasses, classes.size()));
  }
  std::uint64_t total = directory_bytes();
  std::uint64_t chunks = 0;
  std::uint32_t previous = 0;
  for (const auto& c : classes) {
    if (c.payload_bytes == 0 || c.count == 0) {
      return Error(ErrorCode::kInvalidArgument, "a chunk class needs payload_bytes > 0 and count > 0");
    }
    if (c.payload_bytes <= previous) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("chunk classes must grow strictly: {} B follows {} B", c.payload_bytes, previous));
    }
    previous = c.payload_bytes;
    total += (sizeof(ChunkHeader) + round_up(c.payload_bytes, kCacheLine)) * c.count;
    chunks += c.count;
  }
  if (chunks >= kNilIndex) {
    return Error(ErrorCode::kInvalidArgument, "too many chunks in one pool");
  }
  return static_cast<std::size_t>(total);
}

ChunkPool ChunkPool::format(std::byte* base, std::span<const ChunkClassConfig> classes) noexcept {
  auto* dir = new (base) PoolDirectory();
  dir->class_count = static_cast<std::uint32_t>(classes.size());
  std::uint64_t offset = directory_bytes();
  std::uint32_t index = 0;
  for (std::uint32_t i = 0; i < dir->class_count; ++i) {
    SizeClass& sc = dir->classes[i];
    sc.payload_capacity = static_cast<std::uint32_t>(round_up(classes[i].payload_bytes, kCacheLine));
    sc.chunk_count = classes[i].count;
    sc.first_index = index;
    sc.stride = static_cast<std::uint32_t>(sizeof(ChunkHeader) + sc.payload_capacity);
    sc.first_offset = offset;
    // Thread the free list through the chunks in address order.
    for (std::uint32_t k = 0; k < sc.chunk_count; ++k) {
      auto* header = new (base + offset + std::uint64_t{k} * sc.stride) ChunkHeader();
      header->capacity_bytes = sc.payload_capacity;
      header->chunk_index = index + k;
      header->size_class = static_cast<std::uint16_t>(i);
      const std::uint32_t next = k + 1 < sc.chunk_count ? index + k + 1 : kNilIndex;
      header->next_free.store(next, std::memory_order_relaxed);  // published by the segment's ready flag
    }
    sc.free_head.store(make_head(index, 0), std::memory_order_relaxed);  // same
    offset += std::uint64_t{sc.stride} * sc.chunk_count;
    index += sc.chunk_count;
  }
  dir->total_chunks = index;
  dir->chunk_area_bytes = offset;
  return {base, dir};
}

Result<ChunkPool> ChunkPool::attach(std::byte* base, std::size_t bytes) {
  if (bytes < directory_bytes()) {
    return Error(ErrorCode::kIncompatible, "pool segment is smaller than its directory");
  }
  auto* dir = std::launder(reinterpret_cast<PoolDirectory*>(base));
  if (dir->class_count == 0 || dir->class_count > kMaxSizeClasses || dir->chunk_area_bytes > bytes) {
    return Error(ErrorCode::kIncompatible, "pool directory is corrupted (class count or size)");
  }
  std::uint32_t index = 0;
  for (std::uint32_t i = 0; i < dir->class_count; ++i) {
    const SizeClass& sc = dir->classes[i];
    const std::uint64_t end = sc.first_offset + std::uint64_t{sc.stride} * sc.chunk_count;
    if (sc.first_index != index || sc.stride != sizeof(ChunkHeader) + sc.payload_capacity ||
        sc.first_offset % kCacheLine != 0 || end > dir->chunk_area_bytes) {
      return Error(ErrorCode::kIncompatible, fmt::format("pool size class {} is corrupted", i));
    }
    index += sc.chunk_count;
  }
  if (index != dir->total_chunks) {
    return Error(ErrorCode::kIncompatible, "pool chunk count is corrupted");
  }
  return ChunkPool(base, dir);
}

ChunkHeader* ChunkPool::pop(SizeClass& sc) noexcept {
  // Acquire pairs with the release CAS in release(): the pushed chunk's
  // next_free (and the last holder's writes) are visible before we read them.
  std::uint64_t head = sc.free_head.load(std::memory_order_acquire);
  // Cases of the CAS loop:
  // 1. The list is empty: return nullptr.
  // 2. Nobody changed the head since we read it: the CAS succeeds, we own it.
  // 3. Another thread popped or pushed meanwhile: its CAS bumped the tag, ours
  //    fails even if the same index is on top again (ABA), `head` is reloaded
  //    and we retry. `next` may have been read from a chunk that was in use;
  //    it is an atomic, so that read is harmless and its value is discarded.
  for (;;) {
    const std::uint32_t index = head_index(head);
    if (index == kNilIndex) {
      return nullptr;
    }
    ChunkHeader* chunk = chunk_by_index(index);
    // Relaxed: validated by the tagged CAS below.
    const std::uint32_t next = chunk->next_free.load(std::memory_order_relaxed);
    // Acquire on success: see the load above. Acquire on failure: the new
    // head's next_free must be visible for the next round.
    if (sc.free_head.compare_exchange_weak(head, make_head(next, head_tag(head) + 1), std::memory_order_acquire,
                                           std::memory_order_acquire)) {
      return chunk;
    }
  }
}

ChunkHeader* ChunkPool::allocate(std::size_t payload_bytes) noexcept {
  return allocate(payload_bytes, ChunkFallback{.max_classes = kMaxSizeClasses, .max_ratio = 0});
}

ChunkPool::ClassRange ChunkPool::classes_for(std::size_t payload_bytes, const ChunkFallback& fallback) const noexcept {
  const std::uint32_t first = class_for(payload_bytes);
  if (first == dir_->class_count) {
    return {first, first};
  }
  const std::uint64_t bound = std::uint64_t{dir_->classes[first].payload_capacity} * fallback.max_ratio;
  std::uint32_t last = first;
  while (last + 1 < dir_->class_count && last - first < fallback.max_classes &&
         (fallback.max_ratio == 0 || dir_->classes[last + 1].payload_capacity <= bound)) {
    ++last;
  }
  return {first, last};
}

ChunkHeader* ChunkPool::allocate(std::size_t payload_bytes, const ChunkFallback& fallback) noexcept {
  const ClassRange range = classes_for(payload_bytes, fallback);
  for (std::uint32_t i = range.first; i <= range.last && i < dir_->class_count; ++i) {
    SizeClass& sc = dir_->classes[i];
    if (ChunkHeader* chunk = pop(sc)) {
      // Relaxed: the chunk is ours alone until published through a ring.
      chunk->holders.store(kLoanBit, std::memory_order_relaxed);
      return chunk;
    }
  }
  return nullptr;
}

void ChunkPool::release(ChunkHeader* chunk) noexcept {
  SizeClass& sc = dir_->classes[chunk->size_class];
  // Relaxed: we only need a first guess; the CAS validates it.
  std::uint64_t head = sc.free_head.load(std::memory_order_relaxed);
  // Cases: 1. head unchanged: the CAS links the chunk on top. 2. head changed:
  // the CAS fails, reloads `head`, we relink next_free and retry.
  for (;;) {
    // Relaxed: published by the release CAS below.
    chunk->next_free.store(head_index(head), std::memory_order_relaxed);
    // Release pairs with the acquire in pop(): next_free and every write made
    // while the chunk was held happen before the next owner sees it.
    if (sc.free_head.compare_exchange_weak(head, make_head(chunk->chunk_index, head_tag(head) + 1),
                                           std::memory_order_release, std::memory_order_relaxed)) {
      return;
    }
  }
}

bool ChunkPool::drop_holders(ChunkHeader* chunk, std::uint64_t bits) noexcept {
  // acq_rel: release makes this holder's reads of the payload happen before
  // the chunk is reused; acquire (for the one that frees) orders the other
  // holders' releases before our push onto the free list.
  const std::uint64_t before = chunk->holders.fetch_and(~bits, std::memory_order_acq_rel);
  if (before == 0 || (before & ~bits) != 0) {
    return false;
  }
  // We emptied word 0. Without a wide ledger (count 0: nobody can raise it
  // now, see ChunkHeader) the chunk is free; with one, word 0's share of the
  // count goes, and the last share frees it. Acquire: orders a zero stored
  // by publish() (ours) or the previous life's last decrement.
  if (chunk->wide_holders.load(std::memory_order_acquire) != 0 &&
      // acq_rel: as the fetch_and above, for the wide holders' releases.
      chunk->wide_holders.fetch_sub(1, std::memory_order_acq_rel) != 1) {
    return false;
  }
  release(chunk);
  return true;
}

bool ChunkPool::drop_wide_holders(ChunkHeader* chunk, std::uint32_t word, std::uint64_t bits) noexcept {
  // acq_rel: as in drop_holders(); the bit says who holds what, the count
  // who frees.
  const std::uint64_t before = chunk->wide[word - 1].fetch_and(~bits, std::memory_order_acq_rel);
  const auto cleared = static_cast<std::uint32_t>(__builtin_popcountll(before & bits));
  if (cleared == 0) {
    return false;  // not ours to drop (any more): idempotent, like word 0
  }
  // acq_rel: release orders our reads of the payload (and the bit's clear)
  // before the free; acquire, for the one that frees, the others' releases.
  if (chunk->wide_holders.fetch_sub(cleared, std::memory_order_acq_rel) != cleared) {
    return false;
  }
  release(chunk);
  return true;
}

bool ChunkPool::drop_connections(ChunkHeader* chunk, const ConnectionSet& connections) noexcept {
  bool freed = false;
  for (std::uint32_t w = 1; w < kHolderWords; ++w) {
    if (connections.words[w] != 0) {
      freed = drop_wide_holders(chunk, w, connections.words[w]) || freed;
    }
  }
  if (connections.words[0] != 0) {
    freed = drop_holders(chunk, connections.words[0]) || freed;
  }
  return freed;
}

void ChunkPool::set_holders(ChunkHeader* chunk, std::uint64_t own_bits, const ConnectionSet& connections) noexcept {
  // Relaxed, all three: the chunk is ours alone (only our loan bit held it,
  // and the count was at most word 0's share); the release store of word 0
  // below, and then the ring push, publish them.
  std::uint32_t count = 0;
  for (std::uint32_t w = 1; w < kHolderWords; ++w) {
    chunk->wide[w - 1].store(connections.words[w], std::memory_order_relaxed);
    count += static_cast<std::uint32_t>(__builtin_popcountll(connections.words[w]));
  }
  chunk->wide_holders.store(count == 0 ? 0 : count + 1, std::memory_order_relaxed);  // + word 0's share
  // Release pairs with the acquire load in reclaim_connection() (which then
  // sees publisher_block) and with a late joiner's pin (see remember()).
  chunk->holders.store(own_bits | connections.words[0], std::memory_order_release);
}

void ChunkPool::add_holder(ChunkHeader* chunk, HolderBit bit) noexcept {
  if (bit.word != 0) {
    // Relaxed, both: published to the subscriber by the ring push's release.
    if (chunk->wide_holders.load(std::memory_order_relaxed) == 0) {
      // No wide holder, and our history bit keeps word 0 set: nobody else
      // changes a zero count now. Two: the new holder and word 0's share.
      chunk->wide_holders.store(2, std::memory_order_relaxed);
    } else {
      // Others lower a nonzero count meanwhile (word 0's share keeps it
      // above zero): a read-modify-write.
      chunk->wide_holders.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // Relaxed: published to the subscriber by the ring push's release.
  chunk->holder_word(bit.word).fetch_or(bit.mask, std::memory_order_relaxed);
}

bool ChunkPool::only_loan_left(const ChunkHeader* chunk) noexcept {
  // Acquire pairs with each holder's release when it cleared its bit (and
  // lowered the count): their reads of the old message are done.
  return chunk->holders.load(std::memory_order_acquire) == kLoanBit &&
         chunk->wide_holders.load(std::memory_order_acquire) <= 1;  // word 0's share at most
}

ChunkHeader* ChunkPool::chunk_by_index(std::uint32_t index) const noexcept {
  for (std::uint32_t i = 0; i < dir_->class_count; ++i) {
    const SizeClass& sc = dir_->classes[i];
    if (index < sc.first_index + sc.chunk_count) {
      return std::launder(
          reinterpret_cast<ChunkHeader*>(base_ + sc.first_offset + std::uint64_t{index - sc.first_index} * sc.stride));
    }
  }
  return nullptr;
}

std::uint32_t ChunkPool::capacity_of(std::uint32_t index) const noexcept {
  for (std::uint32_t i = 0; i < dir_->class_count; ++i) {
    const SizeClass& sc = dir_->classes[i];
    if (index < sc.first_index + sc.chunk_count) {
      return sc.payload_capacity;
    }
  }
  return 0;
}

std::uint32_t ChunkPool::class_for(std::size_t payload_bytes) const noexcept {
  for (std::uint32_t i = 0; i < dir_->class_count; ++i) {
    if (dir_->classes[i].payload_capacity >= payload_bytes) {
      return i;
    }
  }
  return dir_->class_count;
}

ChunkHeader* ChunkPool::chunk_at(std::uint64_t offset) const noexcept {
  for (std::uint32_t i = 0; i < dir_->class_count; ++i) {
    const SizeClass& sc = dir_->classes[i];
    const std::uint64_t end = sc.first_offset + std::uint64_t{sc.stride} * sc.chunk_count;
    if (offset >= sc.first_offset && offset < end) {
      if ((offset - sc.first_offset) % sc.stride != 0) {
        return nullptr;
      }
      return std::launder(reinterpret_cast<ChunkHeader*>(base_ + offset));
    }
  }
  return nullptr;
}

std::size_t ChunkPool::largest_payload() const noexcept {
  return dir_->classes[dir_->class_count - 1].payload_capacity;
}

std::uint32_t ChunkPool::free_chunks(std::uint32_t i) const noexcept {
  const SizeClass& sc = dir_->classes[i];
  std::uint32_t free = 0;
  for (std::uint32_t k = 0; k < sc.chunk_count; ++k) {
    const ChunkHeader* chunk = chunk_by_index(sc.first_index + k);
    // Acquire: a statistics read that sees frees made by other threads.
    const std::uint64_t holders = chunk->holders.load(std::memory_order_acquire);
    const bool wide = held_wide(chunk, holders);
    const bool cached_and_unused = holders == kLoanBit && chunk->cached.load(std::memory_order_relaxed) == 1;
    if (!wide && (holders == 0 || cached_and_unused)) {
      ++free;
    }
  }
  return free;
}

}  // namespace axon::shm
