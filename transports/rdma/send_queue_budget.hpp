// How many work requests a queue pair's send queue holds now, so that a
// post never overflows it (ibv_post_send would then post part of a write
// chain and fail the rest) and never waits for a completion that cannot
// come (a send queue of unsignalled work requests only).
//
// RC completes a send queue in order, and a completion frees its own work
// request and every one posted before it. So each post takes the next
// sequence numbers (one per work request), the last work request carries
// the last of them in its wr_id (work_request_id.hpp), and its completion
// retires everything up to that number. A post is signalled on its own
// when the unsignalled work requests since the last signalled one would
// reach half the depth (the usual rule: the queue drains before it fills).
//
// Thread safety: none (the queue pair's one poster and poller, or the
// caller's lock). No allocation, no system call.
#pragma once

#include <cstdint>

#include "transports/rdma/work_request_id.hpp"

namespace axon::rdma {

class SendQueueBudget {
 public:
  /// `depth`: the queue pair's send depth (QpConfig::send_depth), at least 2;
  /// `posted_before`: where the count starts (0; tests start near the wrap).
  explicit SendQueueBudget(std::uint32_t depth, std::uint64_t posted_before = 0) noexcept
      : depth_(depth), posted_(posted_before), retired_(posted_before) {}

  /// Room for `work_requests` more now.
  [[nodiscard]] bool has_room(std::uint32_t work_requests) const noexcept {
    return work_requests <= depth_ - outstanding();
  }
  /// Whether a post of `work_requests` must be signalled (the caller's
  /// wish, or the half-depth rule).
  [[nodiscard]] bool must_signal(std::uint32_t work_requests, bool wanted) const noexcept {
    return wanted || unsignalled_ + work_requests >= depth_ / 2;
  }
  /// The sequence the last of the next `work_requests` will have (for its
  /// wr_id, before posting).
  [[nodiscard]] std::uint64_t sequence_after(std::uint32_t work_requests) const noexcept {
    return (posted_ + work_requests) & kWorkSequenceMask;
  }
  /// Counts `work_requests` ibv_post_send took (has_room() said yes).
  void take(std::uint32_t work_requests, bool signalled) noexcept {
    posted_ += work_requests;
    unsignalled_ = signalled ? 0 : unsignalled_ + work_requests;
  }
  /// A send completion (success or flush) of the work request of `sequence`:
  /// it and all before it are done. A sequence behind what was retired
  /// already, or ahead of what was posted, retires nothing (not ours).
  void retire(std::uint64_t sequence) noexcept {
    const std::uint64_t ahead = (sequence - retired_) & kWorkSequenceMask;
    if (ahead <= outstanding()) {
      retired_ += ahead;
    }
  }
  [[nodiscard]] std::uint32_t outstanding() const noexcept { return static_cast<std::uint32_t>(posted_ - retired_); }
  [[nodiscard]] std::uint32_t depth() const noexcept { return depth_; }

 private:
  std::uint32_t depth_;
  std::uint64_t posted_;   // work requests posted, ever
  std::uint64_t retired_;  // of those, known complete
  std::uint32_t unsignalled_ = 0;
};

}  // namespace axon::rdma
