// A bounded single-producer single-consumer ring of small trivially copyable
// entries that lives in shared memory (no pointers). SharedSpscRing keeps its
// slots in an area of its pool (a connection's queue, sized by its depth);
// SpscRing has a fixed capacity inline.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "transports/shm/shm_constants.hpp"

namespace axon::shm {

/// SharedSpscRing, and SpscRing built on it:
///
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
/// One slot: the entry and its turn, on a cache line of its own.
template <class Entry>
struct alignas(kCacheLine) RingSlot {
  std::atomic<std::uint64_t> turn{0};
  Entry entry;
};

/// Where the slots of the rings of one area are, in this process: `count`
/// slots from `base`. A process-local value (the pool's mapping, checked when
/// it was mapped), never read from shared memory, so a ring whose own slot
/// range another process corrupted cannot make it index past the area.
template <class Entry>
struct RingSlots {
  RingSlot<Entry>* base = nullptr;
  std::uint64_t count = 0;
};

/// The shared part of a ring whose slots lie elsewhere (a range of a
/// RingSlots area, chosen by reset()): the indices and the range. Every call
/// takes the area; a range that does not fit in it (another process wrote
/// it) makes the ring look full to the producer and empty to the consumer.
/// Each side keeps its own copy of the range on its own line, so neither
/// reads the other's line for it.
template <class Entry>
class SharedSpscRing {
  static_assert(std::is_trivially_copyable_v<Entry>, "entries are copied between processes");
  static_assert(sizeof(Entry) % sizeof(std::uint64_t) == 0 && alignof(Entry) >= alignof(std::uint64_t),
                "entries are copied as 64-bit words");
  static constexpr std::size_t kWords = sizeof(Entry) / sizeof(std::uint64_t);
  using Slot = RingSlot<Entry>;

 public:
  /// Empties the ring, gives it slots [first, first + capacity) of `slots`
  /// (capacity a power of two) and sets how many entries it may hold.
  /// Not thread-safe.
  void reset(RingSlots<Entry> slots, std::uint32_t first, std::uint32_t capacity, std::uint32_t limit) noexcept {
    for (std::uint64_t i = first; i < std::uint64_t{first} + capacity && i < slots.count; ++i) {
      slots.base[i].turn.store(0, std::memory_order_relaxed);  // published by the caller's
    }                                                          // release of the connection state
    write_index_ = 0;
    cached_read_ = 0;
    first_ = first;
    mask_ = capacity - 1;
    read_index_.store(0, std::memory_order_relaxed);
    consumer_first_ = first;
    consumer_mask_ = capacity - 1;
    limit_ = limit == 0 || limit > capacity ? capacity : limit;
  }

  /// Producer: appends `entry`; false when `limit()` entries are queued.
  /// Never blocks, never allocates.
  bool try_push(RingSlots<Entry> slots, const Entry& entry) noexcept {
    const std::uint64_t write = write_index_;
    if (write - cached_read_ >= limit_) {
      // Acquire pairs with the consumer's release store in try_pop(): it is
      // done with the slots it freed before we overwrite them.
      cached_read_ = read_index_.load(std::memory_order_acquire);
      if (write - cached_read_ >= limit_) {
        return false;
      }
    }
    Slot* slot = producer_slot(slots, write);
    if (slot == nullptr) [[unlikely]] {
      return false;
    }
    store_entry(*slot, entry);
    // Release pairs with the acquire in try_pop(): the entry (and everything
    // the producer wrote before, such as the chunk) is visible with the turn.
    slot->turn.store(write + 1, std::memory_order_release);
    write_index_ = write + 1;
    return true;
  }

  /// Consumer: removes the oldest entry into `out`; false when empty.
  bool try_pop(RingSlots<Entry> slots, Entry& out) noexcept {
    // Relaxed: only the consumer writes read_index_.
    const std::uint64_t read = read_index_.load(std::memory_order_relaxed);
    const Slot* slot = consumer_slot(slots, read);
    // Acquire pairs with the release store of the turn in try_push().
    if (slot == nullptr || slot->turn.load(std::memory_order_acquire) != read + 1) {
      return false;
    }
    out = load_entry(*slot);
    // Release pairs with the producer's acquire load: our read of the slot
    // happens before the producer reuses it.
    read_index_.store(read + 1, std::memory_order_release);
    return true;
  }

  /// Consumer of a ring whose producer may evict_oldest(): like try_pop(),
  /// but claims the entry by compare-exchange.
  bool try_pop_contended(RingSlots<Entry> slots, Entry& out) noexcept {
    // Relaxed: the acquire load of the turn below orders the slot's reads.
    std::uint64_t read = read_index_.load(std::memory_order_relaxed);
    for (;;) {
      const Slot* slot = consumer_slot(slots, read);
      // Acquire pairs with the release store of the turn in try_push().
      if (slot == nullptr || slot->turn.load(std::memory_order_acquire) != read + 1) {
        return false;
      }
      out = load_entry(*slot);
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
  bool evict_oldest(RingSlots<Entry> slots, Entry& out) noexcept {
    const std::uint64_t write = write_index_;
    // Acquire pairs with the consumer's release in try_pop_contended().
    std::uint64_t read = read_index_.load(std::memory_order_acquire);
    while (write - read >= limit_) {
      const Slot* slot = producer_slot(slots, read);
      if (slot == nullptr) [[unlikely]] {
        return false;
      }
      const Entry oldest = load_entry(*slot);  // ours: we wrote it
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
  [[nodiscard]] bool has_entry(RingSlots<Entry> slots) const noexcept {
    const std::uint64_t read = read_index_.load(std::memory_order_relaxed);
    const Slot* slot = consumer_slot(slots, read);
    // Acquire: see try_pop().
    return slot != nullptr && slot->turn.load(std::memory_order_acquire) == read + 1;
  }

  /// Entries ready for the consumer now, counted by their turns from the
  /// consumer's read index: a statistic, callable from any thread (a racing
  /// pop or push makes it one off, never out of the ring's range).
  [[nodiscard]] std::uint64_t size_for_consumer(RingSlots<Entry> slots) const noexcept {
    // Relaxed: a statistic; the turns below are checked one by one.
    const std::uint64_t read = read_index_.load(std::memory_order_relaxed);
    std::uint64_t n = 0;
    for (; n <= std::uint64_t{consumer_mask_}; ++n) {
      const Slot* slot = consumer_slot(slots, read + n);
      // Relaxed: only compared, no entry is read.
      if (slot == nullptr || slot->turn.load(std::memory_order_relaxed) != read + n + 1) {
        break;
      }
    }
    return n;
  }

  /// Producer: entries queued now (the consumer may have taken some since).
  [[nodiscard]] std::uint64_t size_for_producer() const noexcept {
    // Acquire: see try_push().
    return write_index_ - read_index_.load(std::memory_order_acquire);
  }

  [[nodiscard]] std::uint32_t limit() const noexcept { return limit_; }
  /// Neither side: a tool that maps the pool read-only (axon topic info).
  /// The entries queued as the two indices read now, at most limit(): an
  /// estimate, both move meanwhile. Relaxed loads through atomic_ref keep a
  /// read that races the producer's store of its index defined; nothing is
  /// ordered by them.
  [[nodiscard]] std::uint64_t observed_fill() const noexcept {
    const std::uint64_t write =
        std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(write_index_)).load(std::memory_order_relaxed);
    const std::uint64_t read = read_index_.load(std::memory_order_relaxed);
    return write > read ? std::min<std::uint64_t>(write - read, limit_) : 0;
  }
  /// Producer: whether its range lies in `slots` (false: corrupt, never used).
  [[nodiscard]] bool producer_range_fits(RingSlots<Entry> slots) const noexcept {
    return std::uint64_t{first_} + mask_ < slots.count;
  }
  /// The slot range, as the producer's line has it (the creator's view).
  [[nodiscard]] std::uint32_t first_slot() const noexcept { return first_; }
  [[nodiscard]] std::uint64_t capacity() const noexcept { return std::uint64_t{mask_} + 1; }

 private:
  // The range is checked at each use against the process-local area: two
  // compares on the side's own line, so a corrupt range costs that ring only.
  [[nodiscard]] Slot* producer_slot(RingSlots<Entry> slots, std::uint64_t index) const noexcept {
    const std::uint64_t at = std::uint64_t{first_} + (index & mask_);
    return producer_range_fits(slots) ? &slots.base[at] : nullptr;
  }
  [[nodiscard]] const Slot* consumer_slot(RingSlots<Entry> slots, std::uint64_t index) const noexcept {
    const std::uint64_t at = std::uint64_t{consumer_first_} + (index & consumer_mask_);
    return std::uint64_t{consumer_first_} + consumer_mask_ < slots.count ? &slots.base[at] : nullptr;
  }

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

  // Producer's line: its index, its cached view of the consumer, its range.
  alignas(kCacheLine) std::uint64_t write_index_ = 0;
  std::uint64_t cached_read_ = 0;
  std::uint32_t limit_ = 0;
  std::uint32_t first_ = 0;
  std::uint32_t mask_ = 0;
  // Consumer's line: its index and its copy of the range.
  alignas(kCacheLine) std::atomic<std::uint64_t> read_index_{0};
  std::uint32_t consumer_first_ = 0;
  std::uint32_t consumer_mask_ = 0;
};

/// A ring with its `kCapacity` slots inline (tests, benchmarks, one process):
/// the same algorithm, the same calls without the slot area.
template <class Entry, std::uint32_t kCapacity>
class SpscRing {
  static_assert(kCapacity > 0 && (kCapacity & (kCapacity - 1)) == 0, "capacity is a power of two");

 public:
  /// Empties the ring and sets how many entries it may hold. Not thread-safe.
  void reset(std::uint32_t limit) noexcept { shared_.reset(slots(), 0, kCapacity, limit); }
  bool try_push(const Entry& entry) noexcept { return shared_.try_push(slots(), entry); }
  bool try_pop(Entry& out) noexcept { return shared_.try_pop(slots(), out); }
  bool try_pop_contended(Entry& out) noexcept { return shared_.try_pop_contended(slots(), out); }
  bool evict_oldest(Entry& out) noexcept { return shared_.evict_oldest(slots(), out); }
  [[nodiscard]] std::uint64_t fill_estimate() const noexcept { return shared_.fill_estimate(); }
  std::uint64_t refresh_fill() noexcept { return shared_.refresh_fill(); }
  [[nodiscard]] bool has_entry() const noexcept { return shared_.has_entry(slots()); }
  [[nodiscard]] std::uint64_t size_for_producer() const noexcept { return shared_.size_for_producer(); }
  [[nodiscard]] std::uint32_t limit() const noexcept { return shared_.limit(); }
  static constexpr std::uint32_t capacity() noexcept { return kCapacity; }

 private:
  [[nodiscard]] RingSlots<Entry> slots() const noexcept { return {const_cast<RingSlot<Entry>*>(slots_), kCapacity}; }

  SharedSpscRing<Entry> shared_;
  RingSlot<Entry> slots_[kCapacity];
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "shared-memory atomics must be lock-free");

}  // namespace axon::shm
