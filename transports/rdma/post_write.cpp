#include "transports/rdma/post_write.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <array>
#include <cerrno>

#include "src/base/errors.hpp"
#include "transports/rdma/work_request_id.hpp"

namespace axon::rdma {

Result<PostedWrite> post_write_with_imm(ibv_qp* qp, SendQueueBudget& budget, const WriteWithImm& write,
                                        std::uint32_t max_message_bytes) noexcept {
  const std::uint32_t parts = write_chain_parts(write.length, max_message_bytes);
  if (parts == 0) {
    return PostedWrite{.outcome = WriteOutcome::kTooManyParts};
  }
  if (!budget.has_room(parts)) {
    return PostedWrite{.outcome = WriteOutcome::kSendQueueFull};
  }
  const bool signalled = budget.must_signal(parts, write.signalled);
  const std::uint64_t sequence = budget.sequence_after(parts);
  std::array<ibv_sge, kMaxWriteChainParts> sges{};
  std::array<ibv_send_wr, kMaxWriteChainParts> wrs{};
  for (std::uint32_t i = 0; i < parts; ++i) {
    const WritePart part = write_chain_part(i, parts, write.length, max_message_bytes);
    sges[i] = {.addr = write.local_address + part.offset, .length = part.length, .lkey = write.lkey};
    ibv_send_wr& wr = wrs[i];
    wr.sg_list = &sges[i];
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.wr.rdma.remote_addr = write.remote_address + part.offset;
    wr.wr.rdma.rkey = write.rkey;
    wr.next = i + 1 < parts ? &wrs[i + 1] : nullptr;
    // Unsignalled parts still carry a wr_id: a flush completes them too.
    wr.wr_id = encode_work_request_id(
        {.kind = WorkKind::kWrite, .tag = write.tag, .sequence = (sequence - (parts - 1 - i)) & kWorkSequenceMask});
  }
  ibv_send_wr& last = wrs[parts - 1];
  last.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  last.imm_data = htonl(write.immediate);
  last.send_flags = signalled ? IBV_SEND_SIGNALED : 0;
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(qp, wrs.data(), &bad) != 0) {
    return Error(ErrorCode::kSystem,
                 "rdma: ibv_post_send of a write failed (the queue pair is broken or not "
                 "connected; a write chain may be partly posted): tear the queue pair down");
  }
  budget.take(parts, signalled);
  return PostedWrite{.outcome = WriteOutcome::kPosted, .parts = parts, .signalled = signalled, .sequence = sequence};
}

Result<std::uint32_t> port_max_message_bytes(ibv_qp* qp) {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(qp, &attr, IBV_QP_PORT, &init) != 0) {
    return Error(ErrorCode::kSystem, fmt::format("ibv_query_qp failed ({})", errno_text(errno)));
  }
  return port_max_message_bytes(qp->context, attr.port_num);
}

Result<std::uint32_t> port_max_message_bytes(ibv_context* context, std::uint32_t port) {
  if (port == 0 || port > 255) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("RDMA port {} does not exist: ports are 1..255", port));
  }
  ibv_port_attr attr{};
  if (ibv_query_port(context, static_cast<std::uint8_t>(port), &attr) != 0) {
    return Error(ErrorCode::kSystem, fmt::format("ibv_query_port of port {} failed ({})", port, errno_text(errno)));
  }
  return attr.max_msg_sz;
}

}  // namespace axon::rdma
