#include "transports/rdma/device_events.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <mutex>

#include "src/base/errors.hpp"

namespace axon::rdma {
namespace {

struct Subscribers {
  std::mutex mutex;
  std::vector<DeviceEventInbox*> inboxes;
};

Subscribers& subscribers() {
  static auto* s = new Subscribers;  // never destroyed: a participant may outlive static destruction's order
  return *s;
}

}  // namespace

Result<std::unique_ptr<DeviceEventInbox>> DeviceEventInbox::subscribe(ibv_context* context, int wake_fd) {
  const int flags = ::fcntl(context->async_fd, F_GETFL);
  if (flags < 0 || ::fcntl(context->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return Error(ErrorCode::kSystem,
                 fmt::format("cannot make the RDMA device's async event fd non-blocking ({})", errno_text(errno)));
  }
  std::unique_ptr<DeviceEventInbox> inbox(new DeviceEventInbox(context, wake_fd));
  Subscribers& s = subscribers();
  const std::lock_guard lock(s.mutex);
  s.inboxes.push_back(inbox.get());
  return inbox;
}

DeviceEventInbox::~DeviceEventInbox() {
  Subscribers& s = subscribers();
  const std::lock_guard lock(s.mutex);
  std::erase(s.inboxes, this);
}

Result<void> DeviceEventInbox::read_device() {
  Subscribers& s = subscribers();
  // Under the mutex: two readers of one fd hand the events out in the order the device raised them.
  const std::lock_guard lock(s.mutex);
  for (;;) {
    ibv_async_event event{};
    if (ibv_get_async_event(context_, &event) != 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return {};
      }
      return Error(ErrorCode::kSystem,
                   fmt::format("reading the RDMA device's async events failed ({})", errno_text(errno)));
    }
    const ibv_async_event copy = event;
    ibv_ack_async_event(&event);  // at once: ibv_destroy_qp() waits for its QP's events to be acknowledged
    for (DeviceEventInbox* inbox : s.inboxes) {
      if (inbox->context_ != context_) {
        continue;
      }
      inbox->pending_.push_back(copy);
      inbox->has_pending_.store(true, std::memory_order_release);  // pairs with the acquire in has_pending()
      if (inbox != this && inbox->wake_fd_ >= 0) {
        const std::uint64_t one = 1;
        (void)::write(inbox->wake_fd_, &one, sizeof one);  // a full eventfd is awake already
      }
    }
  }
}

void DeviceEventInbox::take(std::vector<ibv_async_event>& out) {
  out.clear();
  const std::lock_guard lock(subscribers().mutex);
  out.swap(pending_);
  has_pending_.store(false, std::memory_order_relaxed);  // under the mutex: the next push sets it again after this
}

}  // namespace axon::rdma
