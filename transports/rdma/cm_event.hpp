// Owning handles of librdmacm objects and one step of its event channel:
// the next event, copied and acknowledged at once (an unacknowledged event
// would make rdma_destroy_id() wait), or "nothing now".
//
// The channel is non-blocking: its fd() can be polled beside other fds, and
// next_cm_event() never waits.
//
// Thread safety: the handles are plain owners (one thread).
#pragma once

#include <rdma/rdma_cma.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "axon/result.hpp"
#include "transports/rdma/connect_private_data.hpp"

namespace axon::rdma {

struct DestroyEventChannel {
  void operator()(rdma_event_channel* c) const noexcept { rdma_destroy_event_channel(c); }
};
/// Destroys the id's QP first (rdma_create_qp made it), then the id.
struct DestroyCmId {
  void operator()(rdma_cm_id* id) const noexcept;
};
using EventChannelHandle = std::unique_ptr<rdma_event_channel, DestroyEventChannel>;
using CmIdHandle = std::unique_ptr<rdma_cm_id, DestroyCmId>;

/// A new event channel, its fd O_NONBLOCK; an error naming /dev/infiniband/rdma_cm
/// (and rdma_ucm) when there is none.
[[nodiscard]] Result<EventChannelHandle> make_event_channel();

/// The verbs context librdmacm keeps open for the device `name` (for the
/// process's life: not to be closed). The protection domain and completion
/// queues of a queue pair rdma_cm connects must be made on it: rdma_create_qp
/// refuses a PD of another context (ibv_open_device's) with EINVAL.
[[nodiscard]] Result<ibv_context*> cm_device_context(std::string_view name);

/// A new RC (RDMA_PS_TCP) id on `channel`.
[[nodiscard]] Result<CmIdHandle> make_cm_id(rdma_event_channel* channel);

/// A new event channel and an RC id on it: how a connection and a listener
/// start. Members in destruction order: the id goes before its channel.
struct ChannelAndId {
  EventChannelHandle channel;
  CmIdHandle id;
};
[[nodiscard]] Result<ChannelAndId> make_channel_and_id();

/// What happened on an id, as a value.
enum class CmEventKind : std::uint8_t {
  kNothing,  ///< No event now (the channel is empty).
  kAddressResolved,
  kRouteResolved,
  kConnectRequest,  ///< On a listener: `request` owns the new id.
  kEstablished,
  kRejected,     ///< `status` is the CM's reason; private data may say axon's.
  kUnreachable,  ///< Address, route or connection error, or no answer.
  kDisconnected,
  kDeviceRemoval,
  kOther,  ///< Anything else (TIMEWAIT_EXIT, ADDR_CHANGE, ...).
};

[[nodiscard]] const char* to_string(CmEventKind kind) noexcept;

struct CmEvent {
  CmEventKind kind = CmEventKind::kNothing;
  rdma_cm_event_type type = RDMA_CM_EVENT_ADDR_RESOLVED;  ///< librdmacm's type, for messages.
  int status = 0;
  rdma_cm_id* id = nullptr;  ///< The id it is about (not owned).
  CmIdHandle request;        ///< kConnectRequest only: the new id, owned.
  std::array<std::byte, kCmRepPrivateDataMax> private_data{};
  std::size_t private_data_len = 0;

  [[nodiscard]] std::span<const std::byte> data() const noexcept { return {private_data.data(), private_data_len}; }
};

/// The next event of `channel` (copied, acknowledged), or kNothing; an error
/// only when the channel itself fails.
[[nodiscard]] Result<CmEvent> next_cm_event(rdma_event_channel* channel);

/// Waits (poll(), at most `timeout`) until the channel's fd is readable or
/// the time ran out; EINTR counts as a wake-up.
[[nodiscard]] Result<void> wait_cm_readable(rdma_event_channel* channel, std::chrono::milliseconds timeout);

/// Waits on the channel's fd (poll(), at most `timeout`) for the next event;
/// kNothing when the time ran out.
[[nodiscard]] Result<CmEvent> wait_cm_event(rdma_event_channel* channel, std::chrono::milliseconds timeout);

}  // namespace axon::rdma
