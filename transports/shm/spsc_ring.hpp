// A bounded single-producer single-consumer ring of small trivially copyable
// entries that lives in shared memory (no pointers, fixed capacity).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "transports/shm/shm_constants.hpp"

namespace axon::shm {

/// Thread safety: exactly one producer and one consumer at a time, which may
/// be in different processes. `reset()` only while neither side uses the ring
/// (its connection is not ACTIVE).
///
/// Each slot carries a turn counter next to its entry, so the consumer polls
/// the slot itself: one cache line moves from producer to consumer per entry
/// (a separate write index would add a second). Slots are a cache line each,
/// so neighbouring entries never share a line.
///
/// Memory ordering: the producer writes the entry, then stores the slot's turn
/// with release; the consumer loads the turn with acquire and then reads the
/// entry. The consumer frees the slot with a release store of `read_index_`,
/// which the producer loads with acquire (only when its cached view says the
/// ring is full) before it overwrites the slot.
///
/// Indices count up forever (64-bit); slot = index mod capacity, and the slot
/// of index i holds it when its turn is i + 1. `limit_` (<= capacity) bounds
/// how many entries may be queued, so any depth can be configured.
template <class Entry, std::uint32_t kCapacity>
class SpscRing {
  static_assert(kCapacity > 0 && (kCapacity & (kCapacity - 1)) == 0, "capacity is a power of two");
  static_assert(std::is_trivially_copyable_v<Entry>, "entries are copied between processes");

  struct alignas(kCacheLine) Slot {
    std::atomic<std::uint64_t> turn{0};
    Entry entry;
  };

 public:
  /// Empties the ring and sets how many entries it may hold. Not thread-safe.
  void reset(std::uint32_t limit) noexcept {
    for (auto& slot : slots_) {
      slot.turn.store(0, std::memory_order_relaxed);  // published by the caller's
    }                                                 // release of the connection state
    write_index_ = 0;
    cached_read_ = 0;
    read_index_.store(0, std::memory_order_relaxed);
    limit_ = limit == 0 || limit > kCapacity ? kCapacity : limit;
  }

  /// Producer: appends `entry`; false when `limit()` entries are queued.
  /// Never blocks, never allocates.
  bool try_push(const Entry& entry) noexcept {
    const std::uint64_t write = write_index_;
    if (write - cached_read_ >= limit_) {
      // Acquire pairs with the consumer's release store in try_pop(): it is
      // done with the slots it freed before we overwrite them.
      cached_read_ = read_index_.load(std::memory_order_acquire);
      if (write - cached_read_ >= limit_) {
        return false;
      }
    }
    Slot& slot = slots_[write & (kCapacity - 1)];
    slot.entry = entry;
    // Release pairs with the acquire in try_pop(): the entry (and everything
    // the producer wrote before, such as the chunk) is visible with the turn.
    slot.turn.store(write + 1, std::memory_order_release);
    write_index_ = write + 1;
    return true;
  }

  /// Consumer: removes the oldest entry into `out`; false when empty.
  bool try_pop(Entry& out) noexcept {
    // Relaxed: only the consumer writes read_index_.
    const std::uint64_t read = read_index_.load(std::memory_order_relaxed);
    const Slot& slot = slots_[read & (kCapacity - 1)];
    // Acquire pairs with the release store of the turn in try_push().
    if (slot.turn.load(std::memory_order_acquire) != read + 1) {
      return false;
    }
    out = slot.entry;
    // Release pairs with the producer's acquire load: our read of the slot
    // happens before the producer reuses it.
    read_index_.store(read + 1, std::memory_order_release);
    return true;
  }

  /// Consumer: whether an entry is waiting (does not take it).
  [[nodiscard]] bool has_entry() const noexcept {
    const std::uint64_t read = read_index_.load(std::memory_order_relaxed);
    // Acquire: see try_pop().
    return slots_[read & (kCapacity - 1)].turn.load(std::memory_order_acquire) == read + 1;
  }

  /// Producer: entries queued now (the consumer may have taken some since).
  [[nodiscard]] std::uint64_t size_for_producer() const noexcept {
    // Acquire: see try_push().
    return write_index_ - read_index_.load(std::memory_order_acquire);
  }

  [[nodiscard]] std::uint32_t limit() const noexcept { return limit_; }
  static constexpr std::uint32_t capacity() noexcept { return kCapacity; }

 private:
  // Producer's line: its index and its cached view of the consumer.
  alignas(kCacheLine) std::uint64_t write_index_ = 0;
  std::uint64_t cached_read_ = 0;
  std::uint32_t limit_ = kCapacity;
  // Consumer's line.
  alignas(kCacheLine) std::atomic<std::uint64_t> read_index_{0};
  Slot slots_[kCapacity];
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "shared-memory atomics must be lock-free");

}  // namespace axon::shm
