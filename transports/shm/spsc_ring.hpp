// A bounded single-producer single-consumer ring of small trivially copyable
// entries that lives in shared memory (no pointers, fixed capacity).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
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
///
/// Drop-oldest: a producer that finds the ring full may evict the oldest
/// entry (evict_oldest()) instead of failing. Both sides then advance
/// `read_index_` by compare-exchange, so exactly one of them owns each entry:
/// the consumer must use try_pop_contended() on such a ring. Entries are
/// copied word by word with relaxed atomic accesses, so a consumer that lost
/// the race reads a slot being rewritten without a data race, and its failed
/// compare-exchange tells it to discard what it read.
template <class Entry, std::uint32_t kCapacity>
class SpscRing {
  static_assert(kCapacity > 0 && (kCapacity & (kCapacity - 1)) == 0, "capacity is a power of two");
  static_assert(std::is_trivially_copyable_v<Entry>, "entries are copied between processes");
  static_assert(sizeof(Entry) % sizeof(std::uint64_t) == 0 && alignof(Entry) >= alignof(std::uint64_t),
                "entries are copied as 64-bit words");
  static constexpr std::size_t kWords = sizeof(Entry) / sizeof(std::uint64_t);

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
    store_entry(slot, entry);
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
    out = load_entry(slot);
    // Release pairs with the producer's acquire load: our read of the slot
    // happens before the producer reuses it.
    read_index_.store(read + 1, std::memory_order_release);
    return true;
  }

  /// Consumer of a ring whose producer may evict_oldest(): like try_pop(),
  /// but claims the entry by compare-exchange.
  bool try_pop_contended(Entry& out) noexcept {
    // Relaxed: the acquire load of the turn below orders the slot's reads.
    std::uint64_t read = read_index_.load(std::memory_order_relaxed);
    for (;;) {
      const Slot& slot = slots_[read & (kCapacity - 1)];
      // Acquire pairs with the release store of the turn in try_push().
      if (slot.turn.load(std::memory_order_acquire) != read + 1) {
        return false;
      }
      out = load_entry(slot);
      // Acq_rel: release as in try_pop() (our reads of the slot happen before
      // the producer reuses it); acquire so that after a failure we see the
      // producer's eviction before retrying. Success means the producer had
      // not evicted `read`, so it had not started rewriting the slot.
      if (read_index_.compare_exchange_weak(read, read + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        return true;
      }
    }
  }

  /// Producer of a full drop-oldest ring: removes the oldest entry into `out`
  /// (the caller releases what it refers to). False when the ring is not full
  /// any more (the consumer took an entry meanwhile): just push.
  bool evict_oldest(Entry& out) noexcept {
    const std::uint64_t write = write_index_;
    // Acquire pairs with the consumer's release in try_pop_contended().
    std::uint64_t read = read_index_.load(std::memory_order_acquire);
    while (write - read >= limit_) {
      const Slot& slot = slots_[read & (kCapacity - 1)];
      const Entry oldest = load_entry(slot);  // ours: we wrote it
      // Acq_rel: we own entry `read` only if we move the index past it.
      if (read_index_.compare_exchange_weak(read, read + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        cached_read_ = read + 1;
        out = oldest;
        return true;
      }
    }
    cached_read_ = read;
    return false;
  }

  /// Producer: an upper bound of the entries queued, from its cached view of
  /// the consumer (no shared read).
  [[nodiscard]] std::uint64_t fill_estimate() const noexcept { return write_index_ - cached_read_; }

  /// Producer: the entries queued now (reads the consumer's index).
  std::uint64_t refresh_fill() noexcept {
    // Acquire: see try_push().
    cached_read_ = read_index_.load(std::memory_order_acquire);
    return write_index_ - cached_read_;
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
  // Relaxed word copies: the turn (and, for evictions, read_index_) orders
  // them; atomic_ref keeps a racing read of a rewritten slot defined.
  static void store_entry(Slot& slot, const Entry& entry) noexcept {
    std::uint64_t words[kWords];
    std::memcpy(words, &entry, sizeof(Entry));
    auto* target = reinterpret_cast<std::uint64_t*>(&slot.entry);
    for (std::size_t i = 0; i < kWords; ++i) {
      std::atomic_ref<std::uint64_t>(target[i]).store(words[i], std::memory_order_relaxed);
    }
  }
  static Entry load_entry(const Slot& slot) noexcept {
    std::uint64_t words[kWords];
    auto* source = const_cast<std::uint64_t*>(reinterpret_cast<const std::uint64_t*>(&slot.entry));
    for (std::size_t i = 0; i < kWords; ++i) {
      words[i] = std::atomic_ref<std::uint64_t>(source[i]).load(std::memory_order_relaxed);
    }
    Entry entry;
    std::memcpy(&entry, words, sizeof(Entry));
    return entry;
  }

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
