#include "transports/rdma/completion.hpp"

#include <arpa/inet.h>

namespace axon::rdma {

Completion classify_completion(const ibv_wc& wc) noexcept {
  Completion c;
  c.wr_id = wc.wr_id;
  c.qp_num = wc.qp_num;
  c.status = wc.status;
  c.status_words = ibv_wc_status_str(wc.status);
  const auto work = decode_work_request_id(wc.wr_id);
  if (work) {
    c.work = *work;
  }
  if (wc.status != IBV_WC_SUCCESS) {
    c.kind = CompletionKind::kFailed;  // only wr_id, status (and qp_num) are valid now
    return c;
  }
  if (!work) {
    c.kind = CompletionKind::kUnexpected;
    return c;
  }
  const bool with_imm = (wc.wc_flags & IBV_WC_WITH_IMM) != 0;
  switch (work->kind) {
    case WorkKind::kReceive:
      c.byte_len = wc.byte_len;
      if (wc.opcode == IBV_WC_RECV && !with_imm) {
        c.kind = CompletionKind::kControlReceived;
      } else if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && with_imm) {
        c.kind = CompletionKind::kWriteReceived;
        c.immediate = ntohl(wc.imm_data);
      }
      return c;  // else kUnexpected (a SEND with immediate)
    case WorkKind::kControlSend:
      c.kind = wc.opcode == IBV_WC_SEND ? CompletionKind::kSendCompleted : CompletionKind::kUnexpected;
      return c;
    case WorkKind::kWrite:
      c.kind = wc.opcode == IBV_WC_RDMA_WRITE ? CompletionKind::kSendCompleted : CompletionKind::kUnexpected;
      return c;
  }
  return c;
}

}  // namespace axon::rdma
