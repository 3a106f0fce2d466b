// A bounded single-producer single-consumer ring of 64-bit values that lives
// in shared memory (no pointers, trivially copyable, fixed capacity).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "transports/shm/shm_constants.hpp"

namespace axon::shm {

/// Thread safety: exactly one producer and one consumer at a time, which may
/// be in different processes. `reset()` and `set_limit()` only while neither
/// side uses the ring (the connection is not ACTIVE).
///
/// Memory ordering: the producer writes a slot, then publishes it with a
/// release store of `write_index_`; the consumer reads the slot after an
/// acquire load of `write_index_`, then frees it with a release store of
/// `read_index_`, which the producer reads with acquire before it reuses the
/// slot. Each side caches the other's index so the common case touches no
/// shared cache line but its own (rigtorp's SPSCQueue).
///
/// Indices count up forever (64-bit, never wrap in practice); the slot is the
/// index modulo the power-of-two capacity, and `limit_` (<= capacity) bounds
/// how many values may be queued, so any depth can be configured.
template <std::uint32_t kCapacity>
class SpscRing {
  static_assert(kCapacity > 0 && (kCapacity & (kCapacity - 1)) == 0, "capacity is a power of two");

 public:
  /// Empties the ring and sets how many values it may hold. Not thread-safe.
  void reset(std::uint32_t limit) noexcept {
    write_index_.store(0, std::memory_order_relaxed);  // published by the caller's release
    read_index_.store(0, std::memory_order_relaxed);   // of the connection state
    cached_read_ = 0;
    cached_write_ = 0;
    limit_ = limit == 0 || limit > kCapacity ? kCapacity : limit;
  }

  /// Producer: appends `value`; false when `limit()` values are queued.
  /// Never blocks, never allocates.
  bool try_push(std::uint64_t value) noexcept {
    // Relaxed: only the producer writes write_index_.
    const std::uint64_t write = write_index_.load(std::memory_order_relaxed);
    if (write - cached_read_ >= limit_) {
      // Acquire pairs with the consumer's release store in try_pop(): the
      // consumer is done reading the slots it freed before we overwrite them.
      cached_read_ = read_index_.load(std::memory_order_acquire);
      if (write - cached_read_ >= limit_) {
        return false;
      }
    }
    slots_[write & (kCapacity - 1)].store(value, std::memory_order_relaxed);
    // Release pairs with the acquire load in try_pop(): the slot (and all the
    // producer wrote before, e.g. the chunk) is visible before the index.
    write_index_.store(write + 1, std::memory_order_release);
    return true;
  }

  /// Consumer: removes the oldest value into `out`; false when empty.
  bool try_pop(std::uint64_t& out) noexcept {
    // Relaxed: only the consumer writes read_index_.
    const std::uint64_t read = read_index_.load(std::memory_order_relaxed);
    if (read == cached_write_) {
      // Acquire pairs with the producer's release store in try_push().
      cached_write_ = write_index_.load(std::memory_order_acquire);
      if (read == cached_write_) {
        return false;
      }
    }
    out = slots_[read & (kCapacity - 1)].load(std::memory_order_relaxed);
    // Release pairs with the producer's acquire load: our read of the slot
    // happens before the producer reuses it.
    read_index_.store(read + 1, std::memory_order_release);
    return true;
  }

  /// Values queued now, as seen by either side (a snapshot).
  [[nodiscard]] std::uint64_t size() const noexcept {
    // Acquire on both so the snapshot is never "negative" for the caller's
    // own side; the result is advisory (fill levels, tests).
    const std::uint64_t read = read_index_.load(std::memory_order_acquire);
    const std::uint64_t write = write_index_.load(std::memory_order_acquire);
    return write >= read ? write - read : 0;
  }

  [[nodiscard]] std::uint32_t limit() const noexcept { return limit_; }
  [[nodiscard]] bool full() const noexcept { return size() >= limit_; }
  static constexpr std::uint32_t capacity() noexcept { return kCapacity; }

  /// Cleanup helper for a dead consumer: the caller becomes the consumer.
  bool try_pop_as_new_consumer(std::uint64_t& out) noexcept {
    cached_write_ = write_index_.load(std::memory_order_acquire);  // see try_pop()
    return try_pop(out);
  }

 private:
  // Producer's line: its index and its cached view of the consumer.
  alignas(kCacheLine) std::atomic<std::uint64_t> write_index_{0};
  std::uint64_t cached_read_ = 0;
  std::uint32_t limit_ = kCapacity;
  // Consumer's line.
  alignas(kCacheLine) std::atomic<std::uint64_t> read_index_{0};
  std::uint64_t cached_write_ = 0;
  alignas(kCacheLine) std::atomic<std::uint64_t> slots_[kCapacity];
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "shared-memory atomics must be lock-free");

}  // namespace axon::shm
