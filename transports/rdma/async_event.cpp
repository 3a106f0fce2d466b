#include "transports/rdma/async_event.hpp"

#include <fmt/format.h>

namespace axon::rdma {
namespace {

AsyncEventOutcome queue_pair_broke(const ibv_async_event& event, const char* what) {
  return {.action = AsyncEventAction::kFailLink,
          .qp = event.element.qp,
          .why = fmt::format("the device reported the queue pair {} ({})", what, async_event_name(event.event_type))};
}

}  // namespace

const char* async_event_name(ibv_event_type type) noexcept {
  switch (type) {
    case IBV_EVENT_CQ_ERR: return "IBV_EVENT_CQ_ERR";
    case IBV_EVENT_QP_FATAL: return "IBV_EVENT_QP_FATAL";
    case IBV_EVENT_QP_REQ_ERR: return "IBV_EVENT_QP_REQ_ERR";
    case IBV_EVENT_QP_ACCESS_ERR: return "IBV_EVENT_QP_ACCESS_ERR";
    case IBV_EVENT_COMM_EST: return "IBV_EVENT_COMM_EST";
    case IBV_EVENT_SQ_DRAINED: return "IBV_EVENT_SQ_DRAINED";
    case IBV_EVENT_PATH_MIG: return "IBV_EVENT_PATH_MIG";
    case IBV_EVENT_PATH_MIG_ERR: return "IBV_EVENT_PATH_MIG_ERR";
    case IBV_EVENT_DEVICE_FATAL: return "IBV_EVENT_DEVICE_FATAL";
    case IBV_EVENT_PORT_ACTIVE: return "IBV_EVENT_PORT_ACTIVE";
    case IBV_EVENT_PORT_ERR: return "IBV_EVENT_PORT_ERR";
    case IBV_EVENT_LID_CHANGE: return "IBV_EVENT_LID_CHANGE";
    case IBV_EVENT_PKEY_CHANGE: return "IBV_EVENT_PKEY_CHANGE";
    case IBV_EVENT_SM_CHANGE: return "IBV_EVENT_SM_CHANGE";
    case IBV_EVENT_SRQ_ERR: return "IBV_EVENT_SRQ_ERR";
    case IBV_EVENT_SRQ_LIMIT_REACHED: return "IBV_EVENT_SRQ_LIMIT_REACHED";
    case IBV_EVENT_QP_LAST_WQE_REACHED: return "IBV_EVENT_QP_LAST_WQE_REACHED";
    case IBV_EVENT_CLIENT_REREGISTER: return "IBV_EVENT_CLIENT_REREGISTER";
    case IBV_EVENT_GID_CHANGE: return "IBV_EVENT_GID_CHANGE";
    case IBV_EVENT_WQ_FATAL: return "IBV_EVENT_WQ_FATAL";
  }
  return "an unknown asynchronous event";
}

AsyncEventOutcome classify_async_event(const ibv_async_event& event, const AsyncEventScope& scope) {
  const char* name = async_event_name(event.event_type);
  switch (event.event_type) {
    case IBV_EVENT_QP_FATAL: return queue_pair_broke(event, "in error");
    case IBV_EVENT_QP_REQ_ERR: return queue_pair_broke(event, "in error: the peer's request was invalid");
    case IBV_EVENT_QP_ACCESS_ERR: return queue_pair_broke(event, "in error: a remote access violation");
    case IBV_EVENT_PATH_MIG_ERR:
      return queue_pair_broke(event, "without a path: the migration to its alternate failed");
    // The link works on: established (rdma_cm says so too), drained, or the last receive of a QP already in error.
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
    case IBV_EVENT_PATH_MIG: return {.action = AsyncEventAction::kNone, .why = name};
    case IBV_EVENT_CQ_ERR:
      if (event.element.cq != scope.cq) {
        return {.action = AsyncEventAction::kNone, .why = fmt::format("{} of another completion queue", name)};
      }
      return {.action = AsyncEventAction::kStop,
              .why = fmt::format("the device reported its completion queue in error ({})", name)};
    case IBV_EVENT_DEVICE_FATAL:
      return {
          .action = AsyncEventAction::kStop,
          .why = fmt::format("the device {} failed ({}); it needs a reset or its driver reloaded", scope.device, name)};
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_PORT_ACTIVE: {
      const bool down = event.event_type == IBV_EVENT_PORT_ERR;
      const bool ours = static_cast<std::uint32_t>(event.element.port_num) == scope.port;
      const std::string words = fmt::format("port {} of {} {} ({})", event.element.port_num, scope.device,
                                            down ? "went down" : "is up", name);
      if (!ours) {
        return {.action = AsyncEventAction::kNone, .why = words + fmt::format("; the links use port {}", scope.port)};
      }
      return {.action = down ? AsyncEventAction::kPortDown : AsyncEventAction::kPortUp, .why = words};
    }
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE:
      return {.action = AsyncEventAction::kLog,
              .why = fmt::format("port {} of {}: {}", event.element.port_num, scope.device, name)};
    // No SRQ or WQ is made: another user of the context (the events are the context's).
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED:
    case IBV_EVENT_WQ_FATAL:
      return {.action = AsyncEventAction::kLog, .why = fmt::format("{} of {}", name, scope.device)};
  }
  return {.action = AsyncEventAction::kLog,
          .why = fmt::format("{} ({}) of {}", name, static_cast<int>(event.event_type), scope.device)};
}

}  // namespace axon::rdma
