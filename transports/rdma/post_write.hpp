// Posting one message as an RDMA WRITE WITH IMMEDIATE into a granted chunk
// (docs/design/rdma-transport.md, "The immediate value", "Messages above
// the port's largest message"): above the port's max_msg_sz, a linked list
// of plain RDMA_WRITEs of max_msg_sz bytes each into the same chunk and the
// last part as the WRITE_WITH_IMM, in one ibv_post_send (one doorbell; RC
// places them in order, so the immediate's completion means all is there).
// Only the last work request may be signalled; the earlier parts consume
// no receive on the peer.
//
// Thread safety: none (the queue pair's poster, or the caller's lock). No
// allocation: the chain is built in fixed arrays on the stack
// (kMaxWriteChainParts). One system call on Soft-RoCE (the doorbell), none
// on hardware.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "axon/result.hpp"
#include "transports/rdma/send_queue_budget.hpp"
#include "transports/rdma/write_chain.hpp"

namespace axon::rdma {

/// One message to write: local bytes (in a registered region), the granted
/// chunk it goes to, the immediate (host order; immediate.hpp).
struct WriteWithImm {
  std::uint64_t local_address = 0;
  std::uint32_t lkey = 0;
  std::uint32_t length = 0;
  std::uint64_t remote_address = 0;
  std::uint32_t rkey = 0;
  std::uint32_t immediate = 0;
  bool signalled = false;  ///< Ask for a send completion (it may come anyway: SendQueueBudget's half-depth rule).
  std::uint16_t tag = 0;   ///< The caller's, back in the send completion's wr_id.
};

enum class WriteOutcome : std::uint8_t {
  kPosted,
  kSendQueueFull,  ///< No room for the chain now: retry after send completions.
  kTooManyParts,   ///< Longer than kMaxWriteChainParts x max_msg_sz: never sendable by RDMA here.
};

struct PostedWrite {
  WriteOutcome outcome = WriteOutcome::kPosted;
  std::uint32_t parts = 0;     ///< Work requests posted (kPosted).
  bool signalled = false;      ///< The last one is signalled (asked, or the half-depth rule).
  std::uint64_t sequence = 0;  ///< The last one's sequence (its send completion retires up to it).
};

/// Posts `write` on `qp` in parts of at most `max_message_bytes`
/// (port_max_message_bytes()). An error when ibv_post_send fails (the
/// queue pair is broken): then the chain may be partly posted, and the
/// queue pair must be torn down.
[[nodiscard]] Result<PostedWrite> post_write_with_imm(ibv_qp* qp, SendQueueBudget& budget, const WriteWithImm& write,
                                                      std::uint32_t max_message_bytes) noexcept;

/// The largest message of the port `qp` is connected through
/// (ibv_port_attr::max_msg_sz). Slow path: two queries.
[[nodiscard]] Result<std::uint32_t> port_max_message_bytes(ibv_qp* qp);
/// The same of `port` of `context` (the chosen port, before a queue pair
/// exists: for the connection's private data). Slow path: one query.
[[nodiscard]] Result<std::uint32_t> port_max_message_bytes(ibv_context* context, std::uint32_t port);

}  // namespace axon::rdma
