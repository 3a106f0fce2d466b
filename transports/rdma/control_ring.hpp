// The receive and send buffers of one queue pair's two-sided traffic
// (docs/design/rdma-transport.md, "Control messages"): one registered heap
// array of kControlSlotBytes (4 KiB) slots, the first `receive_slots` posted
// as receives, the other `send_slots` lent to the control encoders and
// SENT from, each reused only after its send completion.
//
// Every receive has a slot, also the one an incoming WRITE_WITH_IMM
// consumes: a queue pair's receives are consumed in the order they were
// posted, whichever message comes, and a SEND landing on a zero-length
// receive fails the queue pair (IBV_WC_LOC_LEN_ERR). So the receive queue is
// one ring of slots; a completion's opcode says whether the slot holds a
// control message (IBV_WC_RECV: parse_control() its byte_len bytes) or
// nothing (a write's immediate); either way the slot is posted again.
//
// The buffer is registered for local writes only: a peer's RDMA WRITE
// cannot reach it.
//
// Thread safety: none (the queue pair's one thread). create() allocates and
// registers; nothing else allocates. Posting is a system call on Soft-RoCE,
// none on hardware.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "axon/result.hpp"
#include "transports/rdma/control_message.hpp"
#include "transports/rdma/send_queue_budget.hpp"
#include "transports/rdma/slot_free_list.hpp"
#include "transports/rdma/verbs_handles.hpp"

namespace axon::rdma {

/// Slots a ring may have (the wr_id's 16-bit tag numbers them).
inline constexpr std::uint32_t kMaxControlRingSlots = 65536;

/// A send slot lent to an encoder: write the message into `bytes`, then
/// ControlRing::post_send(slot, message bytes).
struct SendSlot {
  std::uint32_t slot = 0;
  std::span<std::byte> bytes;
};

enum class SendOutcome : std::uint8_t {
  kPosted,
  kSendQueueFull,  ///< The send queue has no room now: retry after send completions.
};

struct FreeAligned {
  void operator()(std::byte* p) const noexcept;
};

class ControlRing {
 public:
  /// `receive_slots` + `send_slots` slots (each 1..kMaxControlRingSlots)
  /// registered in `pd` (the pin check first; its error names
  /// RLIMIT_MEMLOCK). Nothing is posted yet.
  [[nodiscard]] static Result<ControlRing> create(ibv_pd* pd, std::uint32_t receive_slots, std::uint32_t send_slots);

  /// Posts every receive slot (once, on a new queue pair: before accept()
  /// or before the connect completes).
  [[nodiscard]] Result<void> post_all_receives(ibv_qp* qp) noexcept;
  /// Posts receive `slot` again, once its completion was handled.
  [[nodiscard]] Result<void> repost_receive(ibv_qp* qp, std::uint32_t slot) noexcept;
  /// The control message in receive `slot`: exactly `byte_len` bytes (the
  /// completion's), for parse_control(); nullopt when the slot is not a
  /// receive slot or byte_len exceeds a slot.
  [[nodiscard]] std::optional<std::span<const std::byte>> received(std::uint32_t slot,
                                                                   std::uint32_t byte_len) const noexcept;

  /// A free send slot, or nullopt when every one waits for its completion.
  [[nodiscard]] std::optional<SendSlot> try_take_send_slot() noexcept;
  /// SENDs the first `message_bytes` of send `slot` (taken, filled by an
  /// encoder), signalled: its completion (send_completed()) frees the slot.
  /// kSendQueueFull leaves the slot taken (post it again later).
  [[nodiscard]] Result<SendOutcome> post_send(ibv_qp* qp, SendQueueBudget& budget, std::uint32_t slot,
                                              std::size_t message_bytes) noexcept;
  /// The send completion (success or error) of send `slot`: the slot is
  /// free again. False when the slot was not out (not a wr_id of ours).
  bool send_completed(std::uint32_t slot) noexcept;

  [[nodiscard]] std::uint32_t receive_slots() const noexcept { return receive_slots_; }
  [[nodiscard]] std::uint32_t free_send_slots() const noexcept { return send_free_.free_count(); }
  [[nodiscard]] std::uint32_t send_slots() const noexcept { return send_free_.capacity(); }

 private:
  ControlRing(std::unique_ptr<std::byte, FreeAligned> buffer, MrHandle mr, std::uint32_t receive_slots,
              std::uint32_t send_slots)
      : buffer_(std::move(buffer)), mr_(std::move(mr)), receive_slots_(receive_slots), send_free_(send_slots) {}
  [[nodiscard]] std::byte* slot_base(std::uint32_t index) const noexcept {
    return buffer_.get() + std::size_t{index} * kControlSlotBytes;
  }
  [[nodiscard]] ibv_recv_wr receive_request(std::uint32_t slot, ibv_sge& sge) const noexcept;

  std::unique_ptr<std::byte, FreeAligned> buffer_;  // receive slots, then send slots
  MrHandle mr_;                                     // deregistered before buffer_ is freed
  std::uint32_t receive_slots_;
  SlotFreeList send_free_;
};

}  // namespace axon::rdma
