// WaitSet: sleep until one of several subscribers has a message, for
// applications that run their own loop (no callbacks).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "axon/result.hpp"
#include "axon/subscriber.hpp"
#include "axon/transport.hpp"
#include "axon/wait_strategy.hpp"

namespace axon {

/// What WaitSet::wait() found.
struct WaitOutcome {
  /// Handles (from attach()) of the subscribers that have a message, in
  /// attach order. Valid until the next wait().
  std::span<const std::size_t> ready;
  /// True when the timeout passed with nothing ready (an outcome, not an error).
  [[nodiscard]] bool timed_out() const noexcept { return ready.empty(); }
};

/// Usage:
///   WaitSet ws;
///   auto pose = ws.attach(pose_sub);                // handle 0
///   auto out = ws.wait(std::chrono::milliseconds(100));
///   if (out && ws.is_ready(*pose)) { auto s = pose_sub->take(); ... }
///
/// Thread safety: one thread uses a WaitSet, and that thread (or one synchronized
/// with it) calls take() on the attached subscribers, which wait() asks for
/// has_data(). wait() does not allocate; it makes system calls only when the
/// strategy sleeps.
class WaitSet {
 public:
  /// futex_waitv watches at most 128 words.
  static constexpr std::size_t kMaxAttached = 128;

  explicit WaitSet(WaitStrategy strategy = WaitStrategy::blocking());

  /// Adds a subscriber; returns its handle (0, 1, ...). kLimitReached beyond
  /// kMaxAttached, kInvalidArgument for nullptr or a subscriber attached twice.
  template <class T>
  Result<std::size_t> attach(std::shared_ptr<Subscriber<T>> subscriber) {
    if (!subscriber) {
      return Error(ErrorCode::kInvalidArgument, "WaitSet::attach(): null subscriber");
    }
    Subscriber<T>* raw = subscriber.get();
    return attach_erased(std::move(subscriber), raw, raw->wake_word(), raw->wait_source(),
                         [](void* s) noexcept { return static_cast<Subscriber<T>*>(s)->has_data(); });
  }

  /// Waits until an attached subscriber has a message or `timeout` passed
  /// (negative: no timeout). kInvalidArgument when nothing is attached.
  Result<WaitOutcome> wait(std::chrono::nanoseconds timeout);
  /// Whether `handle` was ready in the last wait().
  [[nodiscard]] bool is_ready(std::size_t handle) const noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return attached_.size(); }

 private:
  using HasData = bool (*)(void*) noexcept;
  struct Attached {
    std::shared_ptr<void> keep;
    void* subscriber = nullptr;
    HasData has_data = nullptr;
  };
  Result<std::size_t> attach_erased(std::shared_ptr<void> keep, void* subscriber, WakeWord* word, WaitSource* source,
                                    HasData has_data);

  WaitStrategy strategy_;
  std::vector<Attached> attached_;
  std::vector<WakeWord*> words_;  ///< Those that are not nullptr.
  WaitSource* source_ = nullptr;  ///< The first attached subscriber's that has one.
  std::vector<std::size_t> ready_;
  std::vector<bool> ready_flags_;
};

}  // namespace axon
