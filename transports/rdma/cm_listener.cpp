#include "transports/rdma/cm_listener.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>

#include <cerrno>

#include "src/base/errors.hpp"

namespace axon::rdma {

Result<ibv_qp*> ConnectRequest::create_qp(const QpConfig& config) {
  if (auto r = create_rc_qp(id_.get(), config); !r.ok()) {
    return r.error();
  }
  return id_->qp;
}

Result<CmConnection> ConnectRequest::accept(const ConnectPrivateData& own) && {
  auto channel = make_event_channel();
  if (!channel.ok()) {
    return channel.error();
  }
  // The request's event was acknowledged (next_cm_event), so the move does not wait.
  if (rdma_migrate_id(id_.get(), channel.value().get()) != 0) {
    return Error(ErrorCode::kSystem, fmt::format("rdma_migrate_id failed ({})", errno_text(errno)));
  }
  const ConnectPrivateBytes bytes = encode_connect_private_data(own);
  rdma_conn_param param = connection_parameters(bytes);
  if (rdma_accept(id_.get(), &param) != 0) {
    return Error(ErrorCode::kSystem, fmt::format("rdma_accept failed ({})", errno_text(errno)));
  }
  return CmConnection(std::move(channel.value()), std::move(id_), peer_);
}

Result<void> ConnectRequest::reject(RejectReason reason) && {
  const auto bytes = encode_reject(reason);
  if (rdma_reject(id_.get(), bytes.data(), static_cast<std::uint8_t>(bytes.size())) != 0) {
    return Error(ErrorCode::kSystem, fmt::format("rdma_reject failed ({})", errno_text(errno)));
  }
  return {};
}

Result<CmListener> CmListener::listen(Ipv4Endpoint at, int backlog) {
  auto made = make_channel_and_id();
  if (!made.ok()) {
    return made.error();
  }
  sockaddr_in a = to_sockaddr(at);
  if (rdma_bind_addr(made->id.get(), reinterpret_cast<sockaddr*>(&a)) != 0) {
    return Error(ErrorCode::kSystem,
                 fmt::format("cannot bind the rdma_cm listener to {}.{}.{}.{} port {}: rdma_bind_addr failed ({}); "
                             "the address must be on an RDMA device's interface and the port free",
                             at.address >> 24, (at.address >> 16) & 0xFFU, (at.address >> 8) & 0xFFU,
                             at.address & 0xFFU, at.port, errno_text(errno)));
  }
  if (rdma_listen(made->id.get(), backlog) != 0) {
    return Error(ErrorCode::kSystem, fmt::format("rdma_listen failed ({})", errno_text(errno)));
  }
  const std::uint16_t port = ntohs(rdma_get_src_port(made->id.get()));
  return CmListener(std::move(made->channel), std::move(made->id), port);
}

Result<ListenerEvent> CmListener::next_event(const AcceptCheck& check) {
  auto raw = next_cm_event(channel_.get());
  if (!raw.ok()) {
    return raw.error();
  }
  ListenerEvent event;
  switch (raw->kind) {
    case CmEventKind::kNothing: return event;
    case CmEventKind::kDeviceRemoval: event.kind = ListenerEventKind::kDeviceRemoval; return event;
    case CmEventKind::kConnectRequest: break;
    default: event.kind = ListenerEventKind::kOther; return event;
  }
  auto decoded = decode_connect_private_data(raw->data());
  std::optional<RejectReason> refuse;
  if (!decoded.ok()) {
    refuse = decoded.error().code() == ErrorCode::kIncompatible ? RejectReason::kVersion
                                                                : RejectReason::kMalformedPrivateData;
    event.why = std::string(decoded.error().message());
  } else {
    refuse = check(decoded.value());
    if (refuse) {
      event.why = std::string(to_string(*refuse));
    }
  }
  if (refuse) {
    event.kind = ListenerEventKind::kRefused;
    event.refused = *refuse;
    ConnectRequest request(std::move(raw->request), ConnectPrivateData{});
    if (auto r = std::move(request).reject(*refuse); !r.ok()) {
      return r.error();
    }
    return event;
  }
  event.kind = ListenerEventKind::kRequest;
  event.request.emplace(std::move(raw->request), decoded.value());
  return event;
}

Result<ListenerEvent> CmListener::wait_event(const AcceptCheck& check, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto event = next_event(check);
    if (!event.ok() || event->kind != ListenerEventKind::kNothing) {
      return event;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return event;
    }
    if (auto waited = wait_cm_readable(channel_.get(), left); !waited.ok()) {
      return waited.error();
    }
  }
}

}  // namespace axon::rdma
