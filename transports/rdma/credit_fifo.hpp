// One stream's credits on the send side (docs/design/rdma-transport.md,
// "Streams and credits"): the peer's grants, oldest first, each one chunk of
// the receiver's pool that one message may be written into.
//
// The RDMA thread offers each entry of a parsed GRANT (offer(); the queue
// pair's GrantedSlots refuses a slot that is outstanding already); the
// publisher's thread takes one per message in publish() (take_fitting()),
// before it posts the write. take_fitting() takes the oldest credit whose
// capacity fits the message, not only the head: a credit that does not fit
// (a grant of a smaller class, granted before the stream's messages grew)
// stays, in order, for a message it fits or until the credits are forgotten,
// and the credits after it stay usable. The taken entry is removed by moving
// the older entries before it up by one, so the room it held is free at once.
//
// Thread safety / Memory ordering: single producer (offer(): the RDMA
// thread), single consumer (take_fitting(), forget_all(), credits(): the
// publisher's thread). Entries [head, tail) belong to the consumer, the rest
// to the producer. The producer writes an entry, then stores tail with
// release; the consumer loads tail with acquire before it reads entries. The
// consumer stores head with release after its last read or move of an entry;
// the producer loads head with acquire (only when its cached head says the
// FIFO is full) before it overwrites those entries. The grant word is bumped
// by the producer (release) after each accepted credit, for a publisher that
// will wait for credit on it (a futex word; nothing waits on it yet).
//
// The constructor allocates; offer() and take_fitting() do not allocate,
// lock or make a system call, and are O(capacity) at most.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "transports/rdma/control_message.hpp"
#include "transports/rdma/granted_slots.hpp"
#include "transports/shm/shm_constants.hpp"

namespace axon::rdma {

enum class OfferStatus : std::uint8_t {
  kAccepted = 0,
  kDuplicateSlot,       ///< The slot is outstanding already on the queue pair: a broken peer.
  kFifoFull,            ///< More credits than this stream holds: the peer grants beyond rdma.credits.
  kTooManyOutstanding,  ///< The queue pair's GrantedSlots is full.
  kInvalidSlotName,     ///< Size class or slot outside the immediate's fields.
};

enum class TakeStatus : std::uint8_t {
  kTaken = 0,  ///< `grant` is this message's chunk; its slot is no longer outstanding.
  kNoCredit,   ///< No credit at all (an outcome).
  kNoneFits,   ///< Credits, but none of them large enough (an outcome).
};

struct CreditTake {
  TakeStatus status = TakeStatus::kNoCredit;
  GrantEntry grant;
};

class CreditFifo {
 public:
  /// Holds up to `capacity` credits (>= 1; rdma.credits, default 8) whose
  /// slots are recorded in `slots` (the queue pair's; must outlive this).
  /// Allocates.
  CreditFifo(GrantedSlots& slots, std::uint32_t capacity);

  /// Producer: adds one parsed GRANT entry as a credit.
  [[nodiscard]] OfferStatus offer(const GrantEntry& grant) noexcept;

  /// Consumer: takes the oldest credit with capacity_bytes >= payload_bytes.
  [[nodiscard]] CreditTake take_fitting(std::uint32_t payload_bytes) noexcept;

  /// Consumer: gives up every credit held (a fault: they were the peer's
  /// chunks, which its reclaim gets back), unclaiming their slots; returns how
  /// many. Safe while the producer runs (what it offers later stays), but the
  /// FIFO is empty afterwards only if the producer offers nothing more: after a
  /// fault the RDMA thread parses no GRANT of the queue pair before the
  /// consumers have forgotten. When no publisher thread uses the FIFO any more
  /// (it left), any one thread may call it in the consumer's place.
  std::uint32_t forget_all() noexcept;

  /// Consumer: credits held now.
  [[nodiscard]] std::uint32_t credits() const noexcept;

  [[nodiscard]] std::uint32_t capacity() const noexcept { return capacity_; }

  /// Bumped once per accepted credit: a publisher without credit loads it
  /// (acquire, pairs with the release bump in offer()), tries take_fitting(),
  /// and may then sleep while it still has the value it loaded.
  [[nodiscard]] const std::atomic<std::uint32_t>& grant_word() const noexcept { return grant_word_; }

 private:
  struct Credit {
    GrantEntry grant;
    std::uint32_t cell = 0;  ///< In slots_.
  };

  Credit& at(std::uint64_t index) noexcept { return ring_[index & mask_]; }

  GrantedSlots* slots_;
  std::uint32_t capacity_;
  std::uint64_t mask_;  ///< Ring size (a power of two >= capacity_) - 1.
  std::unique_ptr<Credit[]> ring_;

  // Producer's line.
  alignas(shm::kCacheLine) std::atomic<std::uint64_t> tail_{0};
  std::uint64_t cached_head_ = 0;
  std::atomic<std::uint32_t> grant_word_{0};
  // Consumer's line.
  alignas(shm::kCacheLine) std::atomic<std::uint64_t> head_{0};
};

}  // namespace axon::rdma
