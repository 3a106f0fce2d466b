#include "transports/rdma/credit_fifo.hpp"

#include <bit>

namespace axon::rdma {

CreditFifo::CreditFifo(GrantedSlots& slots, std::uint32_t capacity)
    : slots_(&slots),
      capacity_(capacity == 0 ? 1 : capacity),
      mask_(std::bit_ceil(std::uint64_t{capacity_}) - 1),
      ring_(std::make_unique<Credit[]>(mask_ + 1)) {}

OfferStatus CreditFifo::offer(const GrantEntry& grant) noexcept {
  // Relaxed: only the producer writes tail_.
  const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
  if (tail - cached_head_ >= capacity_) {
    // Acquire pairs with the release stores of head_ in take_fitting() and
    // forget_all(): the consumer is done with the entries it freed.
    cached_head_ = head_.load(std::memory_order_acquire);
    if (tail - cached_head_ >= capacity_) {
      return OfferStatus::kFifoFull;
    }
  }
  const SlotClaim claim = slots_->claim(grant.size_class, grant.slot);
  switch (claim.status) {
    case ClaimStatus::kClaimed: break;
    case ClaimStatus::kDuplicate: return OfferStatus::kDuplicateSlot;
    case ClaimStatus::kFull: return OfferStatus::kTooManyOutstanding;
    case ClaimStatus::kInvalidSlotName: return OfferStatus::kInvalidSlotName;
  }
  at(tail) = Credit{.grant = grant, .cell = claim.cell};
  // Release pairs with the acquire in take_fitting()/forget_all()/credits():
  // the entry (and the claim of its cell) is visible with the new tail.
  tail_.store(tail + 1, std::memory_order_release);
  // Release pairs with a waiting publisher's acquire load of the word: the
  // credit is visible once the new value is.
  grant_word_.fetch_add(1, std::memory_order_release);
  return OfferStatus::kAccepted;
}

CreditTake CreditFifo::take_fitting(std::uint32_t payload_bytes) noexcept {
  // Relaxed: only the consumer writes head_.
  const std::uint64_t head = head_.load(std::memory_order_relaxed);
  // Acquire pairs with the release in offer(): entries below tail are written.
  const std::uint64_t tail = tail_.load(std::memory_order_acquire);
  if (head == tail) {
    return {.status = TakeStatus::kNoCredit, .grant = {}};
  }
  std::uint64_t found = head;
  while (found != tail && at(found).grant.capacity_bytes < payload_bytes) {
    ++found;
  }
  if (found == tail) {
    return {.status = TakeStatus::kNoneFits, .grant = {}};
  }
  const Credit taken = at(found);
  // The older credits before it move up by one, keeping their order, so the
  // hole is at head and head can advance past it.
  for (std::uint64_t i = found; i != head; --i) {
    at(i) = at(i - 1);
  }
  // Before the caller posts the write: a re-grant of this slot is only valid
  // after that write arrived.
  slots_->unclaim(taken.cell);
  // Release pairs with the acquire in offer(): our reads and moves of the
  // entries are done before the producer overwrites the freed one.
  head_.store(head + 1, std::memory_order_release);
  return {.status = TakeStatus::kTaken, .grant = taken.grant};
}

std::uint32_t CreditFifo::forget_all() noexcept {
  // Relaxed: only the consumer writes head_.
  const std::uint64_t head = head_.load(std::memory_order_relaxed);
  // Acquire pairs with the release in offer(), as in take_fitting().
  const std::uint64_t tail = tail_.load(std::memory_order_acquire);
  for (std::uint64_t i = head; i != tail; ++i) {
    slots_->unclaim(at(i).cell);
  }
  // Release pairs with the acquire in offer(), as in take_fitting().
  head_.store(tail, std::memory_order_release);
  return static_cast<std::uint32_t>(tail - head);
}

std::uint32_t CreditFifo::credits() const noexcept {
  // Relaxed: the consumer's own index. Acquire: as in take_fitting().
  const std::uint64_t head = head_.load(std::memory_order_relaxed);
  return static_cast<std::uint32_t>(tail_.load(std::memory_order_acquire) - head);
}

}  // namespace axon::rdma
