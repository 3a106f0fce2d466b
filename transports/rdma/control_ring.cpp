#include "transports/rdma/control_ring.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "src/base/errors.hpp"
#include "transports/rdma/pin_limit.hpp"
#include "transports/rdma/work_request_id.hpp"

namespace axon::rdma {

void FreeAligned::operator()(std::byte* p) const noexcept {
  std::free(p);  // NOLINT(cppcoreguidelines-no-malloc): std::aligned_alloc's partner
}

Result<ControlRing> ControlRing::create(ibv_pd* pd, std::uint32_t receive_slots, std::uint32_t send_slots) {
  if (receive_slots == 0 || send_slots == 0 || receive_slots > kMaxControlRingSlots ||
      send_slots > kMaxControlRingSlots) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("a control ring needs 1..{} receive and send slots, not {} and {}", kMaxControlRingSlots,
                             receive_slots, send_slots));
  }
  const std::size_t bytes = std::size_t{receive_slots + send_slots} * kControlSlotBytes;
  if (auto allowed = check_can_pin(bytes, "the RDMA control ring"); !allowed.ok()) {
    return allowed.error();
  }
  // NOLINTNEXTLINE(cppcoreguidelines-no-malloc): page-aligned, freed by FreeAligned
  std::unique_ptr<std::byte, FreeAligned> buffer(static_cast<std::byte*>(std::aligned_alloc(kControlSlotBytes, bytes)));
  if (buffer == nullptr) {
    return Error(ErrorCode::kNoSpace, fmt::format("cannot allocate the RDMA control ring ({} bytes)", bytes));
  }
  MrHandle mr(ibv_reg_mr(pd, buffer.get(), bytes, IBV_ACCESS_LOCAL_WRITE));
  if (mr == nullptr) {
    return Error(ErrorCode::kSystem, fmt::format("cannot register the RDMA control ring ({} bytes): ibv_reg_mr "
                                                 "failed ({})",
                                                 bytes, errno_text(errno)));
  }
  return ControlRing(std::move(buffer), std::move(mr), receive_slots, send_slots);
}

ibv_recv_wr ControlRing::receive_request(std::uint32_t slot, ibv_sge& sge) const noexcept {
  sge = {.addr = reinterpret_cast<std::uintptr_t>(slot_base(slot)),
         .length = static_cast<std::uint32_t>(kControlSlotBytes),
         .lkey = mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = encode_work_request_id({.kind = WorkKind::kReceive, .tag = static_cast<std::uint16_t>(slot)});
  wr.sg_list = &sge;
  wr.num_sge = 1;
  return wr;
}

Result<void> ControlRing::post_all_receives(ibv_qp* qp) noexcept {
  for (std::uint32_t slot = 0; slot < receive_slots_; ++slot) {
    if (auto posted = repost_receive(qp, slot); !posted.ok()) {
      return posted;
    }
  }
  return {};
}

Result<void> ControlRing::repost_receive(ibv_qp* qp, std::uint32_t slot) noexcept {
  if (slot >= receive_slots_) {
    return Error(ErrorCode::kInvalidArgument, "rdma control ring: repost of a slot that is not a receive slot");
  }
  ibv_sge sge{};
  ibv_recv_wr wr = receive_request(slot, sge);
  ibv_recv_wr* bad = nullptr;
  if (ibv_post_recv(qp, &wr, &bad) != 0) {
    return Error(ErrorCode::kSystem,
                 "rdma control ring: ibv_post_recv failed (the receive queue is full or the queue pair is broken)");
  }
  return {};
}

std::optional<std::span<const std::byte>> ControlRing::received(std::uint32_t slot,
                                                                std::uint32_t byte_len) const noexcept {
  if (slot >= receive_slots_ || byte_len > kControlSlotBytes) {
    return std::nullopt;
  }
  return std::span<const std::byte>(slot_base(slot), byte_len);
}

std::optional<SendSlot> ControlRing::try_take_send_slot() noexcept {
  const auto slot = send_free_.take();
  if (!slot) {
    return std::nullopt;
  }
  return SendSlot{.slot = *slot, .bytes = {slot_base(receive_slots_ + *slot), kControlSlotBytes}};
}

Result<SendOutcome> ControlRing::post_send(ibv_qp* qp, SendQueueBudget& budget, std::uint32_t slot,
                                           std::size_t message_bytes) noexcept {
  if (!send_free_.taken(slot) || message_bytes == 0 || message_bytes > kControlSlotBytes) {
    return Error(ErrorCode::kInvalidArgument,
                 "rdma control ring: post_send of a slot not taken, or of 0 or more than 4096 bytes");
  }
  if (!budget.has_room(1)) {
    return SendOutcome::kSendQueueFull;
  }
  ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(slot_base(receive_slots_ + slot)),
              .length = static_cast<std::uint32_t>(message_bytes),
              .lkey = mr_->lkey};
  ibv_send_wr wr{};
  const std::uint64_t sequence = budget.sequence_after(1);
  wr.wr_id = encode_work_request_id(
      {.kind = WorkKind::kControlSend, .tag = static_cast<std::uint16_t>(slot), .sequence = sequence});
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;  // its completion frees the slot
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(qp, &wr, &bad) != 0) {
    return Error(ErrorCode::kSystem,
                 "rdma control ring: ibv_post_send of a control message failed (the queue pair "
                 "is broken or not connected)");
  }
  budget.take(1, true);
  return SendOutcome::kPosted;
}

bool ControlRing::send_completed(std::uint32_t slot) noexcept { return send_free_.release(slot); }

}  // namespace axon::rdma
