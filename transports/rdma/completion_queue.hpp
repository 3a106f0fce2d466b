// A completion queue with its completion channel (docs/design/rdma-transport.md,
// "Completions"): polled in batches of at most kPollBatch into typed values
// (completion.hpp), and the sleeping path: arm (ibv_req_notify_cq), the
// channel's fd becomes readable at the next completion, take the event
// (ibv_get_cq_event), acknowledge events in batches (ibv_ack_cq_events is a
// lock and a condition variable in libibverbs), re-arm, then poll until
// empty: a completion that came between the last poll and the arm raised no
// event, so it is found by the poll after the re-arm (the standard race).
//
// Thread safety: none (the participant's RDMA thread, or the caller's
// lock). create() allocates; poll() makes no system call on hardware (nor on
// Soft-RoCE: rxe's queues are mapped); arm() and take_event() are system
// calls.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "axon/result.hpp"
#include "transports/rdma/completion.hpp"
#include "transports/rdma/verbs_handles.hpp"

namespace axon::rdma {

/// Completions one poll() takes at most.
inline constexpr std::size_t kPollBatch = 16;
/// Channel events acknowledged at once.
inline constexpr std::uint32_t kAckBatch = 64;

struct DestroyCompChannel {
  void operator()(ibv_comp_channel* c) const noexcept { ibv_destroy_comp_channel(c); }
};
using CompChannelHandle = std::unique_ptr<ibv_comp_channel, DestroyCompChannel>;

/// A completion channel on `context`, its fd O_NONBLOCK.
[[nodiscard]] Result<CompChannelHandle> make_completion_channel(ibv_context* context);

/// Waits (poll(), at most `timeout`) until `fd` is readable; false when the
/// time ran out (EINTR counts as a wake-up).
[[nodiscard]] Result<bool> wait_readable(int fd, std::chrono::milliseconds timeout);

/// Takes one event from `channel` (never waits): the queue it is about
/// (hand it to that CompletionQueue's event_taken()), or nullptr when the
/// channel has none now.
[[nodiscard]] Result<ibv_cq*> take_channel_event(ibv_comp_channel* channel) noexcept;

class CompletionQueue {
 public:
  /// A queue of `depth` completions on `context`, its events on `channel`
  /// (which must outlive it).
  [[nodiscard]] static Result<CompletionQueue> create(ibv_context* context, ibv_comp_channel* channel, int depth);

  CompletionQueue(CompletionQueue&&) noexcept = default;
  CompletionQueue& operator=(CompletionQueue&&) noexcept;
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;
  /// Acknowledges the events not acknowledged yet (ibv_destroy_cq waits for them).
  ~CompletionQueue();

  [[nodiscard]] ibv_cq* get() const noexcept { return cq_.get(); }

  /// Up to out.size() (at most kPollBatch) completions, as values; the count.
  [[nodiscard]] Result<std::size_t> poll(std::span<Completion> out) noexcept;
  /// Asks for an event at the next completion (ibv_req_notify_cq).
  [[nodiscard]] Result<void> arm() noexcept;
  /// An event of this queue was taken (take_channel_event()): counted for
  /// the batched acknowledgement, and the queue re-armed; the caller then
  /// polls until empty.
  [[nodiscard]] Result<void> event_taken() noexcept;
  /// Events taken and not acknowledged yet (below kAckBatch).
  [[nodiscard]] std::uint32_t unacknowledged_events() const noexcept { return unacked_; }

 private:
  explicit CompletionQueue(CqHandle cq) : cq_(std::move(cq)) {}
  void acknowledge_all() noexcept;
  CqHandle cq_;
  std::uint32_t unacked_ = 0;
};

}  // namespace axon::rdma
