// WaitSet: readiness of several subscribers, with a WaitStrategy.
#include "axon/wait_set.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "src/scheduler/idler.hpp"
#include "src/scheduler/spin_clock.hpp"

namespace axon {

WaitSet::WaitSet(WaitStrategy strategy) : strategy_(strategy) {
  // Preallocated so that wait() never allocates.
  attached_.reserve(kMaxAttached);
  words_.reserve(kMaxAttached);
  ready_.reserve(kMaxAttached);
  ready_flags_.reserve(kMaxAttached);
}

Result<std::size_t> WaitSet::attach_erased(std::shared_ptr<void> keep, void* subscriber, WakeWord* word,
                                           WaitSource* source, HasData has_data) {
  if (attached_.size() >= kMaxAttached) {
    return Error(
        ErrorCode::kLimitReached,
        "WaitSet: at most " + std::to_string(kMaxAttached) +
            " subscribers (futex_waitv watches 128 words); use a second WaitSet on another thread or an executor");
  }
  for (const Attached& a : attached_) {
    if (a.subscriber == subscriber) {
      return Error(ErrorCode::kInvalidArgument, "WaitSet: this subscriber is attached already");
    }
  }
  attached_.push_back(Attached{.keep = std::move(keep), .subscriber = subscriber, .has_data = has_data});
  if (word != nullptr) {
    words_.push_back(word);
  }
  if (source_ == nullptr) {
    source_ = source;  // lives as long as the subscriber, which `keep` holds
  }
  ready_flags_.push_back(false);
  return attached_.size() - 1;
}

Result<WaitOutcome> WaitSet::wait(std::chrono::nanoseconds timeout) {
  if (attached_.empty()) {
    return Error(ErrorCode::kInvalidArgument, "WaitSet::wait(): nothing attached");
  }
  const bool poll_only = words_.size() != attached_.size();
  auto collect = [this] {
    ready_.clear();  // keeps its capacity: no allocation
    for (std::size_t i = 0; i < attached_.size(); ++i) {
      const bool ready = attached_[i].has_data(attached_[i].subscriber);
      ready_flags_[i] = ready;
      if (ready) {
        ready_.push_back(i);
      }
    }
    return !ready_.empty();
  };
  detail::Idler idler(strategy_);
  detail::SpinClock clock(strategy_);
  // The timeout counts from the first look that found nothing: a wait whose
  // message is already there reads no clock (a system call where the clock has
  // no vDSO path), and one that waits reads it once before its first idle step.
  std::int64_t until = -1;
  for (;;) {
    if (collect()) {
      break;
    }
    const std::int64_t now = clock.now();
    if (until < 0) {
      until = timeout.count() < 0 || timeout.count() > std::numeric_limits<std::int64_t>::max() - now
                  ? std::numeric_limits<std::int64_t>::max()
                  : now + timeout.count();
    }
    if (now >= until) {
      break;
    }
    idler.step(words_, poll_only, now, until, collect, source_);
  }
  return WaitOutcome{.ready = ready_};
}

bool WaitSet::is_ready(std::size_t handle) const noexcept {
  return handle < ready_flags_.size() && ready_flags_[handle];
}

}  // namespace axon
