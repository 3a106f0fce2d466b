// The worker side of a pair run, as the latency, wake-up and serializer
// workers share it: when the next message goes out, the one-in-flight
// hand-shake with the receiver, the end of a run, and where the receiver
// records each latency.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "harness/pair_runner.hpp"
#include "harness/system.hpp"

namespace axon_bench::workers {

/// When a sender's messages go out: as soon as it is its turn (period 0),
/// or on a fixed schedule, counted from when each was due (a late send
/// delays the later ones too: no coordinated omission).
class Pacer {
 public:
  explicit Pacer(std::int64_t period_ns) noexcept : period_ns_(period_ns), due_ns_(now_ns()) {}
  [[nodiscard]] bool on_schedule() const noexcept { return period_ns_ > 0; }
  /// On a schedule: spins until the next message is due and returns when
  /// that was. Else: now.
  std::int64_t next() noexcept {
    if (period_ns_ == 0) {
      return now_ns();
    }
    due_ns_ += period_ns_;
    while (now_ns() < due_ns_) {
      cpu_relax();
    }
    return due_ns_;
  }

 private:
  std::int64_t period_ns_;
  std::int64_t due_ns_;
};

/// Sender: spins until the receiver handled `handled` messages (one in flight).
inline void wait_for_ack(const PairControl& control, std::uint64_t handled) noexcept {
  // Acquire pairs with the receiver's release store of `ack`.
  while (control.ack.load(std::memory_order_acquire) < handled) {
    cpu_relax();
  }
}

/// Receiver: it handled `handled` messages (the chunks are free again).
inline void ack(PairControl& control, std::uint64_t handled) noexcept {
  control.ack.store(handled, std::memory_order_release);  // pairs with wait_for_ack()
}

/// Receiver: it is through; the sender may leave.
inline void signal_finished(PairControl& control) noexcept { ack(control, kFinished); }

/// Sender: waits until the receiver is through (its pool holds what the
/// receiver still reads); the parent's timeout bounds this.
inline void wait_for_finished(const PairControl& control) {
  // Acquire pairs with the receiver's release store of kFinished.
  while (control.ack.load(std::memory_order_acquire) != kFinished) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// Sender: everything is published; waits for the receiver to be through.
inline void finish_sending(PairControl& control) {
  control.done.store(1, std::memory_order_release);  // pairs with the receiver's acquire: all was published
  wait_for_finished(control);
}

/// Receiver: whether the sender published everything.
inline bool sender_done(const PairControl& control) noexcept {
  return control.done.load(std::memory_order_acquire) != 0;  // pairs with finish_sending()
}

/// Where a receiver records one latency per measured message: the slot of
/// message `index` after the warm-up, the start of its measured CPU time,
/// and the progress the parent shows.
class LatencyRecorder {
 public:
  LatencyRecorder(SharedArray<std::int64_t>& slots, PairControl& control, SideReport& report,
                  std::uint64_t warmup) noexcept
      : slots_(slots), control_(control), report_(report), warmup_(warmup) {}

  void record(std::uint64_t index, std::int64_t latency_ns) noexcept {
    if (index < warmup_ || index - warmup_ >= slots_.size()) {
      return;
    }
    if (recorded_ == 0) {
      report_.measure_begin = CpuTimes::now();
    }
    slots_[index - warmup_] = latency_ns;
    if ((++recorded_ & 255) == 0) {
      control_.progress.store(recorded_, std::memory_order_relaxed);  // display only
    }
  }
  [[nodiscard]] std::uint64_t recorded() const noexcept { return recorded_; }

 private:
  SharedArray<std::int64_t>& slots_;
  PairControl& control_;
  SideReport& report_;
  std::uint64_t warmup_;
  std::uint64_t recorded_ = 0;
};

}  // namespace axon_bench::workers
