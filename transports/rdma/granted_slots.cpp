#include "transports/rdma/granted_slots.hpp"

#include "transports/rdma/immediate.hpp"

namespace axon::rdma {

GrantedSlots::GrantedSlots(std::uint32_t max_outstanding)
    : capacity_(max_outstanding), cells_(std::make_unique<std::atomic<std::uint64_t>[]>(max_outstanding)) {}

std::uint64_t GrantedSlots::cell_value(std::uint32_t size_class, std::uint32_t slot) noexcept {
  return (std::uint64_t{size_class} << kSlotAndLengthBits | slot) + 1;
}

SlotClaim GrantedSlots::claim(std::uint32_t size_class, std::uint32_t slot) noexcept {
  if (size_class >= (1U << kClassBits) || slot >= (1U << kSlotAndLengthBits)) {
    return {.status = ClaimStatus::kInvalidSlotName};
  }
  const std::uint64_t value = cell_value(size_class, slot);
  std::uint32_t free_cell = used_;
  for (std::uint32_t i = 0; i < used_; ++i) {
    // Acquire pairs with the release in unclaim(): a slot its holder gave
    // back reads as free (see the header for the order through the device).
    const std::uint64_t seen = cells_[i].load(std::memory_order_acquire);
    if (seen == value) {
      return {.status = ClaimStatus::kDuplicate};
    }
    if (seen == 0 && free_cell == used_) {
      free_cell = i;
    }
  }
  if (free_cell == used_) {
    if (used_ == capacity_) {
      return {.status = ClaimStatus::kFull};
    }
    ++used_;
  }
  // Relaxed: only the producer writes a free cell, and the credit that names
  // this cell reaches its consumer through CreditFifo's release of its tail.
  cells_[free_cell].store(value, std::memory_order_relaxed);
  return {.status = ClaimStatus::kClaimed, .cell = free_cell};
}

void GrantedSlots::unclaim(std::uint32_t cell) noexcept {
  if (cell >= capacity_) {
    return;
  }
  // Release pairs with the acquire in claim(): sequenced before the write's
  // ibv_post_send, so the producer sees the slot free when it is re-granted.
  cells_[cell].store(0, std::memory_order_release);
}

bool GrantedSlots::outstanding(std::uint32_t size_class, std::uint32_t slot) const noexcept {
  if (size_class >= (1U << kClassBits) || slot >= (1U << kSlotAndLengthBits)) {
    return false;
  }
  const std::uint64_t value = cell_value(size_class, slot);
  for (std::uint32_t i = 0; i < used_; ++i) {
    // Acquire: as in claim().
    if (cells_[i].load(std::memory_order_acquire) == value) {
      return true;
    }
  }
  return false;
}

}  // namespace axon::rdma
