// The asynchronous events of a device context (ibv_get_async_event), handed
// to every participant of the process on that context (docs/design/
// rdma-transport.md, "Faults").
//
// The events are the context's, and librdmacm gives every rdma_cm id of a
// device the same context: two nodes of one process (the tests' pairs) read
// one async fd. Whichever participant's thread finds the fd readable reads
// every pending event, acknowledges each at once (ibv_destroy_qp waits for
// the events of its QP to be acknowledged), and appends a copy to the inbox
// of every subscriber of that context, waking the others through their
// eventfd; each then takes its own and classifies them (async_event.hpp).
// The fd is made non-blocking once, so a reader that lost the race to
// another finds nothing and goes on.
//
// Thread safety: every method from any thread; one process-wide mutex guards
// the subscribers and their inboxes (a fault's slow path; never held across
// anything but the fd's reads and the wake writes). has_pending() is one
// acquire load, so the thread asks it on each pass without the mutex.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <memory>
#include <vector>

#include "axon/result.hpp"

namespace axon::rdma {

class DeviceEventInbox {
 public:
  /// Subscribes to `context`'s events; `wake_fd` (an eventfd) is written when
  /// another subscriber's read brought this one events. Makes the async fd
  /// non-blocking. Allocates.
  [[nodiscard]] static Result<std::unique_ptr<DeviceEventInbox>> subscribe(ibv_context* context, int wake_fd);
  ~DeviceEventInbox();
  DeviceEventInbox(const DeviceEventInbox&) = delete;
  DeviceEventInbox& operator=(const DeviceEventInbox&) = delete;
  DeviceEventInbox(DeviceEventInbox&&) = delete;
  DeviceEventInbox& operator=(DeviceEventInbox&&) = delete;

  /// The context's async fd: poll it for reading, then read_device().
  [[nodiscard]] int fd() const noexcept { return context_->async_fd; }
  /// Reads every event pending on the fd (never waits), acknowledges each and
  /// gives it to every subscriber of the context. An error when the read
  /// fails otherwise than "nothing there".
  [[nodiscard]] Result<void> read_device();
  /// Whether take() has something (cheap: no lock).
  [[nodiscard]] bool has_pending() const noexcept { return has_pending_.load(std::memory_order_acquire); }
  /// Replaces `out` with this subscriber's events, oldest first.
  void take(std::vector<ibv_async_event>& out);

 private:
  DeviceEventInbox(ibv_context* context, int wake_fd) : context_(context), wake_fd_(wake_fd) {}

  ibv_context* const context_;
  const int wake_fd_;
  std::vector<ibv_async_event> pending_;  // under the process-wide mutex
  // Stored with release under the mutex after pending_ grew (pairs with the acquire in has_pending()), cleared by
  // take().
  std::atomic<bool> has_pending_{false};
};

}  // namespace axon::rdma
