// The ACKs of a writer's RELIABLE readers on their way from the receive
// thread to the writer, and the word a publisher waiting for them sleeps on.
// The receive thread must not wait for the writer's mutex (a 1 MiB publish
// holds it for a whole message), so it queues here and the writer applies
// the queue under its mutex when it next looks (UdpWriter::apply_acks()).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "axon/transport.hpp"
#include "src/base/futex.hpp"

namespace axon::udp {

/// Thread safety: push() by one thread at a time (the holder of the receive
/// turn), drain() by one thread at a time (the holder of the writer's mutex);
/// the lock each side holds orders its successive threads.
class AckInbox {
 public:
  struct Entry {
    std::uint64_t participant = 0;    ///< The reader's sender id.
    std::uint64_t next_sequence = 0;  ///< It has every message before this one.
  };
  static constexpr std::size_t kCapacity = 64;

  /// Queues an ACK and wakes a publisher that waits for one. A full queue
  /// drops it: ACKs are cumulative, and the reader's next one says as much.
  void push(const Entry& entry) noexcept {
    // Relaxed: only this side writes tail_.
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    // Acquire: pairs with drain()'s release of head_, so the slot was read.
    if (tail - head_.load(std::memory_order_acquire) == kCapacity) {
      return;
    }
    ring_[tail % kCapacity] = entry;
    // Release: drain() that sees the new tail sees the entry.
    tail_.store(tail + 1, std::memory_order_release);
    wake();
  }

  /// Calls apply(entry) for every ACK queued, oldest first.
  template <class Apply>
  void drain(Apply&& apply) noexcept {
    // Acquire: pairs with push()'s release; relaxed head_: only this side writes it.
    const std::uint64_t tail = tail_.load(std::memory_order_acquire);
    std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head == tail) {
      return;
    }
    for (; head != tail; ++head) {
      apply(ring_[head % kCapacity]);
    }
    // Release: push() may reuse the slots once it sees this.
    head_.store(head, std::memory_order_release);
  }

  /// Wakes a publisher waiting on word() (an ACK came, or the readers changed).
  void wake() noexcept {
    // The fence pairs with futex::Waiter's seq_cst increment of `waiters`,
    // made before the waiter drains: either it sees our entry or we see it.
    futex::full_fence();
    futex::notify_if_waiting(word_);
  }
  [[nodiscard]] WakeWord& word() noexcept { return word_; }

 private:
  std::array<Entry, kCapacity> ring_{};
  std::atomic<std::uint64_t> head_{0};  ///< Next entry drain() reads.
  std::atomic<std::uint64_t> tail_{0};  ///< Next slot push() writes.
  WakeWord word_;
};

}  // namespace axon::udp
