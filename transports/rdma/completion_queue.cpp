#include "transports/rdma/completion_queue.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <utility>

#include "src/base/errors.hpp"

namespace axon::rdma {

Result<CompChannelHandle> make_completion_channel(ibv_context* context) {
  CompChannelHandle channel(ibv_create_comp_channel(context));
  if (channel == nullptr) {
    return Error(ErrorCode::kSystem, fmt::format("ibv_create_comp_channel failed ({})", errno_text(errno)));
  }
  const int flags = fcntl(channel->fd, F_GETFL);
  if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return Error(ErrorCode::kSystem,
                 fmt::format("cannot make the completion channel non-blocking: fcntl failed ({})", errno_text(errno)));
  }
  return channel;
}

Result<bool> wait_readable(int fd, std::chrono::milliseconds timeout) {
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  const int n = ::poll(&p, 1, static_cast<int>(timeout.count()));
  if (n < 0 && errno != EINTR) {
    return Error(ErrorCode::kSystem, fmt::format("poll on fd {} failed ({})", fd, errno_text(errno)));
  }
  return n > 0;
}

Result<CompletionQueue> CompletionQueue::create(ibv_context* context, ibv_comp_channel* channel, int depth) {
  CqHandle cq(ibv_create_cq(context, depth, nullptr, channel, 0));
  if (cq == nullptr) {
    return Error(ErrorCode::kSystem, fmt::format("ibv_create_cq of {} entries failed ({})", depth, errno_text(errno)));
  }
  return CompletionQueue(std::move(cq));
}

CompletionQueue& CompletionQueue::operator=(CompletionQueue&& other) noexcept {
  if (this != &other) {
    acknowledge_all();
    cq_ = std::move(other.cq_);
    unacked_ = std::exchange(other.unacked_, 0);
  }
  return *this;
}

CompletionQueue::~CompletionQueue() { acknowledge_all(); }

void CompletionQueue::acknowledge_all() noexcept {
  if (cq_ != nullptr && unacked_ != 0) {
    ibv_ack_cq_events(cq_.get(), unacked_);
  }
  unacked_ = 0;
}

Result<std::size_t> CompletionQueue::poll(std::span<Completion> out) noexcept {
  std::array<ibv_wc, kPollBatch> wcs{};
  const int want = static_cast<int>(std::min(out.size(), kPollBatch));
  const int n = ibv_poll_cq(cq_.get(), want, wcs.data());
  if (n < 0) {
    return Error(ErrorCode::kSystem, "rdma: ibv_poll_cq failed (the completion queue is broken)");
  }
  for (int i = 0; i < n; ++i) {
    out[static_cast<std::size_t>(i)] = classify_completion(wcs[static_cast<std::size_t>(i)]);
  }
  return static_cast<std::size_t>(n);
}

Result<void> CompletionQueue::arm() noexcept {
  if (ibv_req_notify_cq(cq_.get(), 0) != 0) {
    return Error(ErrorCode::kSystem, "rdma: ibv_req_notify_cq failed (the completion queue is broken)");
  }
  return {};
}

Result<ibv_cq*> take_channel_event(ibv_comp_channel* channel) noexcept {
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  if (ibv_get_cq_event(channel, &cq, &context) != 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return static_cast<ibv_cq*>(nullptr);
    }
    return Error(ErrorCode::kSystem, "rdma: ibv_get_cq_event failed (the completion channel is broken)");
  }
  return cq;
}

Result<void> CompletionQueue::event_taken() noexcept {
  if (++unacked_ == kAckBatch) {
    acknowledge_all();
  }
  return arm();
}

}  // namespace axon::rdma
