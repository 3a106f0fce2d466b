// The free send slots of a control ring: a fixed stack of slot numbers,
// sized at construction (no allocation after), with a flag per slot so that
// a slot released twice or never taken is refused instead of handed out twice.
//
// Thread safety: none (the queue pair's one thread, or the caller's lock).
// The constructor allocates; take() and release() do not.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace axon::rdma {

class SlotFreeList {
 public:
  explicit SlotFreeList(std::uint32_t slots) : free_(slots), taken_(slots, false) {
    for (std::uint32_t i = 0; i < slots; ++i) {
      free_[i] = slots - 1 - i;  // slot 0 is taken first
    }
    free_count_ = slots;
  }

  /// A free slot, or nullopt when every slot waits for its send completion.
  [[nodiscard]] std::optional<std::uint32_t> take() noexcept {
    if (free_count_ == 0) {
      return std::nullopt;
    }
    const std::uint32_t slot = free_[--free_count_];
    taken_[slot] = true;
    return slot;
  }
  /// Gives `slot` back; false (nothing changes) when it is not taken now.
  bool release(std::uint32_t slot) noexcept {
    if (slot >= taken_.size() || !taken_[slot]) {
      return false;
    }
    taken_[slot] = false;
    free_[free_count_++] = slot;
    return true;
  }
  [[nodiscard]] bool taken(std::uint32_t slot) const noexcept { return slot < taken_.size() && taken_[slot]; }
  [[nodiscard]] std::uint32_t free_count() const noexcept { return free_count_; }
  [[nodiscard]] std::uint32_t capacity() const noexcept { return static_cast<std::uint32_t>(taken_.size()); }

 private:
  std::vector<std::uint32_t> free_;
  std::vector<bool> taken_;
  std::uint32_t free_count_ = 0;
};

}  // namespace axon::rdma
