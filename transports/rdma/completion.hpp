// A work completion (ibv_wc) as a typed value (docs/design/rdma-transport.md,
// "Completions"): what the data plane does next depends only on these.
//
//   kControlReceived  receive `slot` holds a control message of `byte_len`
//                     bytes (ControlRing::received, then parse_control);
//   kWriteReceived    a WRITE_WITH_IMM consumed receive `slot` (its buffer is
//                     untouched): `immediate` (host order) and `byte_len`;
//   kSendCompleted    a control SEND (`tag` = its send slot) or a write
//                     (`tag` = the caller's) is done, with every send-queue
//                     work request up to `sequence`;
//   kFailed           an error status (`status`, its words from
//                     ibv_wc_status_str): `wr_id` (decoded in `work` when it
//                     is ours) says what failed; IBV_WC_WR_FLUSH_ERR is
//                     what a queue pair in the error state does to every
//                     outstanding work request;
//   kUnexpected       a success that this protocol never produces (a SEND
//                     with immediate, a wr_id of no kind we post).
//
// Thread safety: pure. No allocation (data path).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "transports/rdma/work_request_id.hpp"

namespace axon::rdma {

enum class CompletionKind : std::uint8_t {
  kControlReceived,
  kWriteReceived,
  kSendCompleted,
  kFailed,
  kUnexpected,
};

struct Completion {
  CompletionKind kind = CompletionKind::kUnexpected;
  WorkRequestId work;           ///< The decoded wr_id (kind kReceive: tag is the slot).
  std::uint32_t byte_len = 0;   ///< Receives.
  std::uint32_t immediate = 0;  ///< kWriteReceived, host order.
  ibv_wc_status status = IBV_WC_SUCCESS;
  const char* status_words = "";  ///< ibv_wc_status_str(status): static text.
  std::uint64_t wr_id = 0;        ///< As the completion carried it.
  std::uint32_t qp_num = 0;       ///< The local queue pair's number (valid on errors too): whose link.

  [[nodiscard]] std::uint32_t slot() const noexcept { return work.tag; }
};

/// What `wc` says (pure: the tests feed it made-up completions).
[[nodiscard]] Completion classify_completion(const ibv_wc& wc) noexcept;

}  // namespace axon::rdma
