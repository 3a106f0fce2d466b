// The send side's record of which of the peer's grant slots are outstanding
// on one queue pair (docs/design/rdma-transport.md, "Streams and credits"):
// a slot the peer grants again while it is still outstanding is a broken
// peer (two credits would name one chunk), refused here, and the caller
// tears the queue pair down.
//
// A slot (size class, slot number) is outstanding from the moment claim()
// records it (the RDMA thread, parsing a GRANT, before the credit enters a
// stream's CreditFifo) until unclaim() of its cell: CreditFifo::take_fitting()
// does that before it returns the credit, so before the publisher posts the
// write that uses it; CreditFifo::forget_all() does it for credits given up.
// A valid receiver re-grants a slot only after that write arrived, so only
// after the unclaim.
//
// Thread safety / Memory ordering: one producer (the RDMA thread: claim(),
// outstanding()) and any number of unclaimers, each the consumer of a
// CreditFifo of this queue pair, which unclaims only the cells of the credits
// it took. Each cell has one writer per state: the producer turns a free
// cell (0) into a slot's key, the holder of that credit turns it back to 0.
// The unclaim is a release store and the producer's scan loads with acquire.
// Between the unclaim and the re-grant the order runs through the device
// (the unclaim is sequenced before ibv_post_send, whose provider fences
// before the doorbell; the GRANT's completion is read after the provider's
// fence on the completion queue), so the producer sees the cell free when the
// re-grant arrives; in the tests a return channel between the threads gives
// the same order. A claim's store is relaxed: the credit reaches its consumer
// through the CreditFifo's release of its tail, which orders it.
//
// Cost: claim() scans the cells used so far (the lowest free one is reused,
// so that is the peak of outstanding grants, never more than the capacity);
// unclaim() is one store. The constructor allocates; nothing else does.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace axon::rdma {

enum class ClaimStatus : std::uint8_t {
  kClaimed = 0,      ///< `cell` holds the slot until it is unclaimed.
  kDuplicate,        ///< The slot is outstanding already: a broken peer.
  kFull,             ///< More grants outstanding than the capacity: a broken or misconfigured peer.
  kInvalidSlotName,  ///< Size class >= 16 or slot >= 2^28 (the parser refuses these first).
};

struct SlotClaim {
  ClaimStatus status = ClaimStatus::kFull;
  std::uint32_t cell = 0;
};

class GrantedSlots {
 public:
  /// Room for `max_outstanding` grants at once on the queue pair (at least
  /// the sum of its streams' CreditFifo capacities). Allocates.
  explicit GrantedSlots(std::uint32_t max_outstanding);

  /// Producer: records that (size_class, slot) is outstanding.
  [[nodiscard]] SlotClaim claim(std::uint32_t size_class, std::uint32_t slot) noexcept;

  /// The holder of the claim's credit (or the producer, for a claim it did not
  /// hand on): the slot is no longer outstanding. Never allocates.
  void unclaim(std::uint32_t cell) noexcept;

  /// Producer: whether (size_class, slot) is outstanding now.
  [[nodiscard]] bool outstanding(std::uint32_t size_class, std::uint32_t slot) const noexcept;

  [[nodiscard]] std::uint32_t capacity() const noexcept { return capacity_; }

 private:
  /// 0: free; else the slot's key + 1.
  [[nodiscard]] static std::uint64_t cell_value(std::uint32_t size_class, std::uint32_t slot) noexcept;

  std::uint32_t capacity_;
  std::uint32_t used_ = 0;  ///< Producer only: cells at or above were never claimed.
  std::unique_ptr<std::atomic<std::uint64_t>[]> cells_;
};

}  // namespace axon::rdma
