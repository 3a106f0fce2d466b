#include "transports/rdma/cm_connection.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>

#include <cerrno>
#include <string>

#include "src/base/errors.hpp"

namespace axon::rdma {
namespace {

constexpr std::uint8_t kRetryCount = 7;
constexpr std::uint8_t kRnrRetryCount = 7;

std::string endpoint_text(Ipv4Endpoint e) {
  return fmt::format("{}.{}.{}.{}:{}", e.address >> 24, (e.address >> 16) & 0xFFU, (e.address >> 8) & 0xFFU,
                     e.address & 0xFFU, e.port);
}

ConnectionEventKind connection_kind(CmEventKind kind) noexcept {
  switch (kind) {
    case CmEventKind::kNothing: return ConnectionEventKind::kNothing;
    case CmEventKind::kEstablished: return ConnectionEventKind::kEstablished;
    case CmEventKind::kDisconnected: return ConnectionEventKind::kDisconnected;
    case CmEventKind::kRejected: return ConnectionEventKind::kRejected;
    case CmEventKind::kUnreachable: return ConnectionEventKind::kUnreachable;
    case CmEventKind::kDeviceRemoval: return ConnectionEventKind::kDeviceRemoval;
    default: return ConnectionEventKind::kOther;
  }
}

}  // namespace

sockaddr_in to_sockaddr(Ipv4Endpoint e) noexcept {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(e.port);
  a.sin_addr.s_addr = htonl(e.address);
  return a;
}

Result<void> create_rc_qp(rdma_cm_id* id, const QpConfig& config) {
  if (config.pd == nullptr || config.pd->context != id->verbs) {
    return Error(ErrorCode::kInvalidArgument,
                 "cannot create the RDMA queue pair: its protection domain is not on the verbs context rdma_cm "
                 "resolved the address to (make it on cm_device_context() of that device)");
  }
  ibv_qp_init_attr init{};
  init.send_cq = config.send_cq;
  init.recv_cq = config.recv_cq;
  init.qp_type = IBV_QPT_RC;
  init.sq_sig_all = 0;
  init.cap = {.max_send_wr = config.send_depth,
              .max_recv_wr = config.recv_depth,
              .max_send_sge = 1,
              .max_recv_sge = 1,
              .max_inline_data = 0};
  if (rdma_create_qp(id, config.pd, &init) != 0) {
    return Error(ErrorCode::kSystem,
                 fmt::format("cannot create the RDMA queue pair ({} sends, {} receives): rdma_create_qp failed ({})",
                             config.send_depth, config.recv_depth, errno_text(errno)));
  }
  return {};
}

rdma_conn_param connection_parameters(const ConnectPrivateBytes& private_data) noexcept {
  rdma_conn_param p{};
  p.private_data = private_data.data();
  p.private_data_len = static_cast<std::uint8_t>(private_data.size());
  p.responder_resources = 0;  // writes only: no RDMA READ or atomics
  p.initiator_depth = 0;
  p.retry_count = kRetryCount;
  p.rnr_retry_count = kRnrRetryCount;
  return p;
}

CmConnection::CmConnection(EventChannelHandle channel, CmIdHandle id, const QpConfig& config,
                           const ConnectPrivateData& own, std::chrono::milliseconds timeout)
    : channel_(std::move(channel)),
      id_(std::move(id)),
      config_(config),
      own_(encode_connect_private_data(own)),
      timeout_ms_(static_cast<int>(timeout.count())) {}

CmConnection::CmConnection(EventChannelHandle channel, CmIdHandle id, const ConnectPrivateData& peer)
    : channel_(std::move(channel)), id_(std::move(id)), peer_(peer) {}

CmConnection::~CmConnection() = default;

Result<CmConnection> CmConnection::connect(Ipv4Endpoint source, Ipv4Endpoint peer, const QpConfig& config,
                                           const ConnectPrivateData& own, std::chrono::milliseconds timeout) {
  auto made = make_channel_and_id();
  if (!made.ok()) {
    return made.error();
  }
  const std::string what = fmt::format("RDMA connection from {} to {}", endpoint_text(source), endpoint_text(peer));
  sockaddr_in src = to_sockaddr({.address = source.address, .port = 0});
  sockaddr_in dst = to_sockaddr(peer);
  const auto ms = static_cast<int>(timeout.count());
  if (rdma_resolve_addr(made->id.get(), reinterpret_cast<sockaddr*>(&src), reinterpret_cast<sockaddr*>(&dst), ms) !=
      0) {
    return Error(ErrorCode::kSystem, fmt::format("{}: rdma_resolve_addr failed ({})", what, errno_text(errno)));
  }
  return CmConnection(std::move(made->channel), std::move(made->id), config, own, timeout);
}

Result<ConnectionEvent> CmConnection::next_event() {
  auto raw = next_cm_event(channel_.get());
  if (!raw.ok()) {
    return raw.error();
  }
  if (raw->kind == CmEventKind::kAddressResolved || raw->kind == CmEventKind::kRouteResolved) {
    if (auto r = continue_setup(raw->kind); !r.ok()) {
      return r.error();
    }
  }
  ConnectionEvent event{.kind = connection_kind(raw->kind),
                        .status = raw->status,
                        .cm_event = raw->kind == CmEventKind::kNothing ? "" : rdma_event_str(raw->type),
                        .reason = std::nullopt};
  if (event.kind == ConnectionEventKind::kRejected) {
    event.reason = decode_reject(raw->data());
  }
  if (event.kind == ConnectionEventKind::kEstablished && !peer_) {
    auto decoded = decode_connect_private_data(raw->data());  // the REP of the passive side
    if (!decoded.ok()) {
      (void)disconnect();
      return decoded.error();
    }
    peer_ = decoded.value();
  }
  if (event.kind == ConnectionEventKind::kEstablished) {
    established_ = true;
  }
  if (event.kind == ConnectionEventKind::kDisconnected) {
    established_ = false;
  }
  return event;
}

Result<void> CmConnection::continue_setup(CmEventKind kind) {
  if (kind == CmEventKind::kAddressResolved) {
    if (rdma_resolve_route(id_.get(), timeout_ms_) != 0) {
      return Error(ErrorCode::kSystem,
                   fmt::format("RDMA connection: rdma_resolve_route failed ({})", errno_text(errno)));
    }
    return {};
  }
  if (auto r = create_rc_qp(id_.get(), config_); !r.ok()) {
    return r;
  }
  rdma_conn_param param = connection_parameters(own_);
  if (rdma_connect(id_.get(), &param) != 0) {
    return Error(ErrorCode::kSystem, fmt::format("RDMA connection: rdma_connect failed ({})", errno_text(errno)));
  }
  return {};
}

Result<ConnectionEvent> CmConnection::wait_event(std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto event = next_event();
    if (!event.ok() || (event->kind != ConnectionEventKind::kNothing && event->kind != ConnectionEventKind::kOther)) {
      return event;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return ConnectionEvent{};
    }
    if (auto waited = wait_cm_readable(channel_.get(), left); !waited.ok()) {
      return waited.error();
    }
  }
}

Result<void> CmConnection::wait_established(std::chrono::milliseconds timeout) {
  auto event = wait_event(timeout);
  if (!event.ok()) {
    return event.error();
  }
  if (event->kind == ConnectionEventKind::kNothing) {
    return Error(ErrorCode::kTimeout,
                 fmt::format("the RDMA connection was not established within {} ms", timeout.count()));
  }
  if (event->kind != ConnectionEventKind::kEstablished) {
    return connection_failure(event.value());
  }
  return {};
}

Result<void> CmConnection::disconnect() {
  if (rdma_disconnect(id_.get()) != 0) {
    return Error(ErrorCode::kSystem, fmt::format("rdma_disconnect failed ({})", errno_text(errno)));
  }
  established_ = false;
  return {};
}

Error connection_failure(const ConnectionEvent& event) {
  switch (event.kind) {
    case ConnectionEventKind::kRejected:
      if (event.reason) {
        return {ErrorCode::kIncompatible,
                fmt::format("the peer rejected the RDMA connection: {}", to_string(*event.reason))};
      }
      return {ErrorCode::kClosed,
              fmt::format("the RDMA connection was rejected by the peer's host (CM reject reason {}): nobody "
                          "listens on that rdma_cm port, or the peer is not an axon participant",
                          event.status)};
    case ConnectionEventKind::kUnreachable:
      return {ErrorCode::kClosed, fmt::format("the peer is unreachable over RDMA ({}, status {}): check its "
                                              "address and that it runs on an RDMA device",
                                              event.cm_event, event.status)};
    case ConnectionEventKind::kDisconnected: return {ErrorCode::kClosed, "the peer disconnected the RDMA connection"};
    case ConnectionEventKind::kDeviceRemoval: return {ErrorCode::kClosed, "the RDMA device was removed"};
    default: return {ErrorCode::kSystem, "the RDMA connection ended in an unexpected event"};
  }
}

}  // namespace axon::rdma
