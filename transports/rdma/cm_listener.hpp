// The passive side of the rdma_cm connection: a listener bound to this
// host's IPv4 address and a port (0: any, port() says which), whose connect
// requests are decoded and checked by the caller's predicate; a request that
// does not decode or that the predicate refuses is rejected with the reason
// byte (rdma_reject's private data), which the active side reports.
//
// An accepted request becomes a CmConnection with its own event channel
// (rdma_migrate_id), so the listener's channel only carries requests.
//
// Thread safety: one thread (the participant's). Everything here allocates.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "axon/result.hpp"
#include "transports/rdma/cm_connection.hpp"
#include "transports/rdma/cm_event.hpp"
#include "transports/rdma/connect_private_data.hpp"

namespace axon::rdma {

/// nullopt accepts the peer's private data; a reason rejects it.
using AcceptCheck = std::function<std::optional<RejectReason>(const ConnectPrivateData&)>;

/// A connect request that decoded and passed the check: create the QP, post
/// the receives the peer may need at once, then accept (or reject). Dropped
/// with neither, the id is destroyed and the CM refuses the request for it.
class ConnectRequest {
 public:
  ConnectRequest(CmIdHandle id, const ConnectPrivateData& peer) : id_(std::move(id)), peer_(peer) {}

  [[nodiscard]] const ConnectPrivateData& peer() const noexcept { return peer_; }
  /// The queue pair (in INIT: receives may be posted before accept()).
  [[nodiscard]] Result<ibv_qp*> create_qp(const QpConfig& config);
  /// Moves the id to its own event channel and answers with `own` (the REP).
  [[nodiscard]] Result<CmConnection> accept(const ConnectPrivateData& own) &&;
  [[nodiscard]] Result<void> reject(RejectReason reason) &&;

 private:
  CmIdHandle id_;
  ConnectPrivateData peer_;
};

enum class ListenerEventKind : std::uint8_t {
  kNothing,
  kRequest,        ///< `request` holds it.
  kRefused,        ///< A request was rejected with `refused`; `why` says more.
  kDeviceRemoval,  ///< The listener's device went away.
  kOther,
};

struct ListenerEvent {
  ListenerEventKind kind = ListenerEventKind::kNothing;
  std::optional<ConnectRequest> request;
  RejectReason refused = RejectReason::kNotExpected;
  std::string why;
};

class CmListener {
 public:
  /// Listens on `at` (its port 0: any) with room for `backlog` requests.
  [[nodiscard]] static Result<CmListener> listen(Ipv4Endpoint at, int backlog = 16);

  [[nodiscard]] int fd() const noexcept { return channel_->fd; }
  /// The bound port (host order).
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  /// The next event (kNothing when none now). A request that does not
  /// decode or that `check` refuses is rejected here (kRefused).
  [[nodiscard]] Result<ListenerEvent> next_event(const AcceptCheck& check);
  /// The next event other than kNothing, waiting at most `timeout`.
  [[nodiscard]] Result<ListenerEvent> wait_event(const AcceptCheck& check, std::chrono::milliseconds timeout);

 private:
  CmListener(EventChannelHandle channel, CmIdHandle id, std::uint16_t port)
      : channel_(std::move(channel)), id_(std::move(id)), port_(port) {}
  EventChannelHandle channel_;  // destroyed after id_
  CmIdHandle id_;
  std::uint16_t port_ = 0;
};

}  // namespace axon::rdma
