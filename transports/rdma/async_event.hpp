// An asynchronous event of the RDMA device (ibv_get_async_event) as what the
// participant must do about it (docs/design/rdma-transport.md, "Faults"):
//
//   kFailLink    the queue pair `qp` broke (QP_FATAL, QP_REQ_ERR,
//                QP_ACCESS_ERR, PATH_MIG_ERR): its link is ended as a failed
//                completion ends it (PeerLinks::fail), `why` in words;
//   kPortDown    our port went down (PORT_ERR): every link is ended, the
//                participant stays, and the links come back when it is up;
//   kPortUp      our port is active again (PORT_ACTIVE): nothing to tear
//                down, the active side retries its connections now;
//   kStop        the participant's completion queue failed (CQ_ERR) or the
//                device did (DEVICE_FATAL): RDMA stops as when a drain of
//                the completion queue fails;
//   kLog         worth a line, nothing to change (LID, PKEY or GID change,
//                CLIENT_REREGISTER, SM change, an SRQ or WQ event);
//   kNone        nothing (COMM_EST, SQ_DRAINED, QP_LAST_WQE_REACHED, another
//                port's or another CQ's event).
//
// The event's pointers are compared, never followed: the event is copied and
// acknowledged before it is classified, and its QP may be destroyed by then.
//
// Thread safety: pure. Allocates (`why`): the slow path of faults.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace axon::rdma {

enum class AsyncEventAction : std::uint8_t {
  kNone,
  kLog,
  kFailLink,
  kPortDown,
  kPortUp,
  kStop,
};

/// What the participant uses of the device: to tell its events from others'.
struct AsyncEventScope {
  std::string_view device;     ///< "rxe0": in the words.
  std::uint32_t port = 1;      ///< The port its links use.
  const ibv_cq* cq = nullptr;  ///< Its completion queue.
};

struct AsyncEventOutcome {
  AsyncEventAction action = AsyncEventAction::kNone;
  const ibv_qp* qp = nullptr;  ///< kFailLink: the queue pair whose link to end.
  std::string why;             ///< In words, for the log and the link's failure.
};

[[nodiscard]] AsyncEventOutcome classify_async_event(const ibv_async_event& event, const AsyncEventScope& scope);

/// "IBV_EVENT_PORT_ERR" (ours: ibv_event_type_str() says "port error").
[[nodiscard]] const char* async_event_name(ibv_event_type type) noexcept;

}  // namespace axon::rdma
