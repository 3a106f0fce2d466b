// Decoded messages of a decoding subscriber (Protobuf, user serializers),
// reused from sample to sample so the steady state does not allocate.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace axon::detail {

/// Thread safety: acquire() and object() from the taking thread only;
/// release() from any thread (samples may be dropped anywhere).
///
/// Memory ordering: a slot is owned by whoever cleared its bit. release()
/// sets the bit with a release RMW after the sample's last read of the object;
/// acquire() claims it with an acquire CAS before decoding into it again.
template <class T>
class DecodedPool {
 public:
  static constexpr std::uint32_t kMaxSlots = 64;

  explicit DecodedPool(std::uint32_t slots)
      : objects_(slots < kMaxSlots ? slots : kMaxSlots),
        free_(objects_.size() == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << objects_.size()) - 1) {}

  /// A free slot, or -1 when every object is held by a sample. Never blocks.
  int acquire() noexcept {
    // Relaxed first read: the CAS below validates it.
    std::uint64_t free = free_.load(std::memory_order_relaxed);
    // Cases: 1. nothing free: -1. 2. our CAS clears the lowest free bit: we
    // own that slot. 3. a concurrent release() set another bit: the CAS
    // fails, reloads `free`, and we retry with the fresher mask.
    while (free != 0) {
      const int slot = __builtin_ctzll(free);
      // Acquire pairs with the release in release(): the previous sample's
      // reads of this object are done before we decode into it.
      if (free_.compare_exchange_weak(free, free & (free - 1), std::memory_order_acquire, std::memory_order_relaxed)) {
        return slot;
      }
    }
    return -1;
  }

  /// The object of an acquired slot; created on first use (the only allocation).
  T& object(int slot) {
    auto& object = objects_[static_cast<std::size_t>(slot)];
    if (!object) {
      object = std::make_unique<T>();
    }
    return *object;
  }

  void release(int slot) noexcept {
    if (slot < 0 || slot >= static_cast<int>(kMaxSlots)) {
      return;  // not one of ours (also tells the compiler the shift is in range)
    }
    // Release: see acquire().
    free_.fetch_or(std::uint64_t{1} << slot, std::memory_order_release);
  }

 private:
  std::vector<std::unique_ptr<T>> objects_;
  std::atomic<std::uint64_t> free_;
};

}  // namespace axon::detail
