// One rdma_cm connection (an RC queue pair) between two participants
// (docs/design/rdma-transport.md, "Connection set-up"): the active side's
// connect (address and route resolved from the hosts' IPv4 addresses, the
// id bound to this host's address so rdma_cm picks its GID), the passive
// side's accepted request (cm_listener.hpp), and what then happens to the
// connection as values: ESTABLISHED, DISCONNECTED, REJECTED (with axon's
// reason when the peer gave one), UNREACHABLE, DEVICE_REMOVAL.
//
// Each connection has its own non-blocking event channel: fd() can be
// polled beside other fds and next_event() says "nothing now" as a value.
// The QP: RC on the caller's protection domain and completion queues, the
// caller's send/receive depths, one SGE each, no inline data, sq_sig_all 0;
// CM retry_count 7, rnr_retry_count 7, no RDMA READ/atomics (writes only).
//
// Thread safety: one thread (the participant's). Set-up allocates.
#pragma once

#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include <chrono>
#include <cstdint>
#include <optional>

#include "axon/result.hpp"
#include "transports/rdma/cm_event.hpp"
#include "transports/rdma/connect_private_data.hpp"

namespace axon::rdma {

/// An IPv4 address and port, both in host byte order (port 0: any).
struct Ipv4Endpoint {
  std::uint32_t address = 0;
  std::uint16_t port = 0;
};

/// `e` as the socket address rdma_bind_addr / rdma_resolve_addr take.
[[nodiscard]] sockaddr_in to_sockaddr(Ipv4Endpoint e) noexcept;

/// What the queue pair is made of; the caller owns pd and the CQs, which
/// must outlive the connection and be made on cm_device_context() of the
/// device the addresses resolve to.
struct QpConfig {
  ibv_pd* pd = nullptr;
  ibv_cq* send_cq = nullptr;
  ibv_cq* recv_cq = nullptr;
  std::uint32_t send_depth = 0;
  std::uint32_t recv_depth = 0;
};

/// rdma_cm's bound on address and on route resolution (each ends in an event).
inline constexpr std::chrono::milliseconds kResolveTimeout{2000};

/// The RC queue pair of `config` on `id` (rdma_create_qp; the id owns it).
[[nodiscard]] Result<void> create_rc_qp(rdma_cm_id* id, const QpConfig& config);

/// The connection parameters both sides use, with `private_data`.
[[nodiscard]] rdma_conn_param connection_parameters(const ConnectPrivateBytes& private_data) noexcept;

enum class ConnectionEventKind : std::uint8_t {
  kNothing,
  kEstablished,
  kDisconnected,
  kRejected,
  kUnreachable,
  kDeviceRemoval,
  kOther,  ///< Set-up progress (address, route resolved) or an event of no interest.
};

struct ConnectionEvent {
  ConnectionEventKind kind = ConnectionEventKind::kNothing;
  int status = 0;                      ///< The CM's status (REJECTED: its reject reason).
  const char* cm_event = "";           ///< librdmacm's name of the event (rdma_event_str).
  std::optional<RejectReason> reason;  ///< kRejected by an axon peer: why.
};

class CmConnection {
 public:
  /// Binds a new id to `source` (port 0) and starts resolving `peer`
  /// (rdma_cm bounds each step by `timeout`); it does not wait. The rest is
  /// driven by next_event(): address resolved -> route resolution, route
  /// resolved -> the QP of `config` and the connect request with `own`. Then
  /// ESTABLISHED (peer() decoded from the REP), REJECTED or UNREACHABLE.
  [[nodiscard]] static Result<CmConnection> connect(Ipv4Endpoint source, Ipv4Endpoint peer, const QpConfig& config,
                                                    const ConnectPrivateData& own,
                                                    std::chrono::milliseconds timeout = kResolveTimeout);
  /// A passive side's connection (cm_listener.cpp): `id` accepted, its
  /// events on `channel`, the peer's private data from its request.
  CmConnection(EventChannelHandle channel, CmIdHandle id, const ConnectPrivateData& peer);

  CmConnection(CmConnection&&) noexcept = default;
  CmConnection& operator=(CmConnection&&) noexcept = default;
  CmConnection(const CmConnection&) = delete;
  CmConnection& operator=(const CmConnection&) = delete;
  ~CmConnection();

  /// The event channel's fd (readable when next_event() has one).
  [[nodiscard]] int fd() const noexcept { return channel_->fd; }
  /// The next event, or kNothing; an error when the channel fails or an
  /// ESTABLISHED peer's REP private data does not decode (then the
  /// connection is disconnected).
  [[nodiscard]] Result<ConnectionEvent> next_event();
  /// Waits (at most `timeout`) for ESTABLISHED; an error naming what came
  /// instead (the peer's reason for a rejection) or the timeout.
  [[nodiscard]] Result<void> wait_established(std::chrono::milliseconds timeout);
  /// Waits (at most `timeout`) for the next event other than kNothing/kOther.
  [[nodiscard]] Result<ConnectionEvent> wait_event(std::chrono::milliseconds timeout);

  /// The peer's private data (the passive side has it from the start, the
  /// active side from ESTABLISHED on).
  [[nodiscard]] const std::optional<ConnectPrivateData>& peer() const noexcept { return peer_; }
  [[nodiscard]] ibv_qp* qp() const noexcept { return id_->qp; }
  [[nodiscard]] bool established() const noexcept { return established_; }

  /// Sends the DREQ (rdma_disconnect); the QP goes to the error state.
  [[nodiscard]] Result<void> disconnect();

 private:
  CmConnection(EventChannelHandle channel, CmIdHandle id, const QpConfig& config, const ConnectPrivateData& own,
               std::chrono::milliseconds timeout);
  // The active side's next set-up step after an address or route event.
  [[nodiscard]] Result<void> continue_setup(CmEventKind kind);
  EventChannelHandle channel_;  // destroyed after id_ (declared first)
  CmIdHandle id_;
  std::optional<ConnectPrivateData> peer_;
  bool established_ = false;
  QpConfig config_{};          // active side: for the QP once the route is there
  ConnectPrivateBytes own_{};  // active side: the REQ's private data
  int timeout_ms_ = 0;
};

/// The error a connection attempt ends in when `event` came instead of
/// ESTABLISHED ("the peer rejected the connection: the pool layout ABI hash
/// differs", "... unreachable ...").
[[nodiscard]] Error connection_failure(const ConnectionEvent& event);

}  // namespace axon::rdma
