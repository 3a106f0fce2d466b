#include "transports/rdma/cm_event.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "src/base/errors.hpp"

namespace axon::rdma {

void DestroyCmId::operator()(rdma_cm_id* id) const noexcept {
  if (id->qp != nullptr) {
    rdma_destroy_qp(id);
  }
  rdma_destroy_id(id);
}

Result<EventChannelHandle> make_event_channel() {
  EventChannelHandle channel(rdma_create_event_channel());
  if (channel == nullptr) {
    return Error(ErrorCode::kSystem,
                 fmt::format("cannot open an rdma_cm event channel ({}): /dev/infiniband/rdma_cm needs the kernel "
                             "module rdma_ucm (modprobe rdma_ucm) and an RDMA device",
                             errno_text(errno)));
  }
  const int flags = fcntl(channel->fd, F_GETFL);
  if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return Error(
        ErrorCode::kSystem,
        fmt::format("cannot make the rdma_cm event channel non-blocking: fcntl failed ({})", errno_text(errno)));
  }
  return channel;
}

Result<ibv_context*> cm_device_context(std::string_view name) {
  int count = 0;
  ibv_context** contexts = rdma_get_devices(&count);
  if (contexts == nullptr) {
    return Error(ErrorCode::kSystem,
                 fmt::format("rdma_get_devices failed ({}): no RDMA device for rdma_cm", errno_text(errno)));
  }
  ibv_context* found = nullptr;
  for (int i = 0; i < count && found == nullptr; ++i) {
    if (name == ibv_get_device_name(contexts[i]->device)) {
      found = contexts[i];
    }
  }
  rdma_free_devices(contexts);  // the array only: librdmacm keeps the contexts open
  if (found == nullptr) {
    return Error(ErrorCode::kSystem, fmt::format("rdma_cm does not know the RDMA device {} (rdma_get_devices)", name));
  }
  return found;
}

Result<CmIdHandle> make_cm_id(rdma_event_channel* channel) {
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(channel, &id, nullptr, RDMA_PS_TCP) != 0) {
    return Error(ErrorCode::kSystem, fmt::format("rdma_create_id failed ({})", errno_text(errno)));
  }
  return CmIdHandle(id);
}

Result<ChannelAndId> make_channel_and_id() {
  auto channel = make_event_channel();
  if (!channel.ok()) {
    return channel.error();
  }
  auto id = make_cm_id(channel.value().get());
  if (!id.ok()) {
    return id.error();
  }
  return ChannelAndId{.channel = std::move(channel.value()), .id = std::move(id.value())};
}

const char* to_string(CmEventKind kind) noexcept {
  switch (kind) {
    case CmEventKind::kNothing: return "nothing";
    case CmEventKind::kAddressResolved: return "ADDR_RESOLVED";
    case CmEventKind::kRouteResolved: return "ROUTE_RESOLVED";
    case CmEventKind::kConnectRequest: return "CONNECT_REQUEST";
    case CmEventKind::kEstablished: return "ESTABLISHED";
    case CmEventKind::kRejected: return "REJECTED";
    case CmEventKind::kUnreachable: return "UNREACHABLE";
    case CmEventKind::kDisconnected: return "DISCONNECTED";
    case CmEventKind::kDeviceRemoval: return "DEVICE_REMOVAL";
    case CmEventKind::kOther: return "other";
  }
  return "unknown";
}

namespace {

CmEventKind kind_of(rdma_cm_event_type type) noexcept {
  switch (type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED: return CmEventKind::kAddressResolved;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: return CmEventKind::kRouteResolved;
    case RDMA_CM_EVENT_CONNECT_REQUEST: return CmEventKind::kConnectRequest;
    case RDMA_CM_EVENT_ESTABLISHED: return CmEventKind::kEstablished;
    case RDMA_CM_EVENT_REJECTED: return CmEventKind::kRejected;
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE: return CmEventKind::kUnreachable;
    case RDMA_CM_EVENT_DISCONNECTED: return CmEventKind::kDisconnected;
    case RDMA_CM_EVENT_DEVICE_REMOVAL: return CmEventKind::kDeviceRemoval;
    default: return CmEventKind::kOther;
  }
}

}  // namespace

Result<CmEvent> next_cm_event(rdma_event_channel* channel) {
  rdma_cm_event* raw = nullptr;
  if (rdma_get_cm_event(channel, &raw) != 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return CmEvent{};
    }
    return Error(ErrorCode::kSystem, fmt::format("rdma_get_cm_event failed ({})", errno_text(errno)));
  }
  CmEvent event;
  event.type = raw->event;
  event.kind = kind_of(raw->event);
  event.status = raw->status;
  event.id = raw->id;
  if (event.kind == CmEventKind::kConnectRequest) {
    event.request.reset(raw->id);  // the listener's new id: ours to accept, reject or destroy
  }
  const rdma_conn_param& conn = raw->param.conn;
  if (conn.private_data != nullptr) {
    event.private_data_len = std::min<std::size_t>(conn.private_data_len, event.private_data.size());
    std::memcpy(event.private_data.data(), conn.private_data, event.private_data_len);
  }
  rdma_ack_cm_event(raw);
  return event;
}

Result<void> wait_cm_readable(rdma_event_channel* channel, std::chrono::milliseconds timeout) {
  pollfd p{.fd = channel->fd, .events = POLLIN, .revents = 0};
  if (poll(&p, 1, static_cast<int>(timeout.count())) < 0 && errno != EINTR) {
    return Error(ErrorCode::kSystem, fmt::format("poll on the rdma_cm event channel failed ({})", errno_text(errno)));
  }
  return {};
}

Result<CmEvent> wait_cm_event(rdma_event_channel* channel, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto event = next_cm_event(channel);
    if (!event.ok() || event->kind != CmEventKind::kNothing) {
      return event;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      return event;
    }
    if (auto waited = wait_cm_readable(channel, std::chrono::milliseconds(left)); !waited.ok()) {
      return waited.error();
    }
  }
}

}  // namespace axon::rdma
