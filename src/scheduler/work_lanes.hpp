// WorkLanes: the multi-threaded executor's work queues, one lock-free MPMC
// queue (moodycamel::ConcurrentQueue) per priority level, sized so that the
// steady state never allocates.
#pragma once

#include <concurrentqueue/concurrentqueue.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace axon::detail {

/// Items are entry indices. Each subscription is queued at most once at a
/// time (the executor's ownership protocol), so a lane never holds more
/// items than its level has subscriptions.
///
/// Thread safety: push() by producer `p` (0..producers-1) from one thread at
/// a time per p; pop() by consumer `c` likewise; the rest from any thread.
/// Neither allocates: blocks and producer tokens are made in the constructor.
class WorkLanes {
 public:
  using Queue = moodycamel::ConcurrentQueue<std::uint32_t>;

  /// `per_level[l]`: subscriptions of level l (0 = highest priority).
  WorkLanes(const std::vector<std::size_t>& per_level, std::size_t producers, std::size_t consumers) {
    for (std::size_t items : per_level) {
      // moodycamel's bound for explicit producers that never allocate:
      // (ceil(items / BLOCK_SIZE) + 1) blocks per producer.
      const std::size_t blocks = (items + Queue::BLOCK_SIZE - 1) / Queue::BLOCK_SIZE + 1;
      auto lane = std::make_unique<Lane>(blocks * producers * Queue::BLOCK_SIZE);
      for (std::size_t p = 0; p < producers; ++p) {
        lane->producers.emplace_back(lane->queue);
      }
      for (std::size_t c = 0; c < consumers; ++c) {
        lane->consumers.emplace_back(lane->queue);
      }
      lanes_.push_back(std::move(lane));
    }
  }

  /// Queues `item` on `level`. Returns false only if the preallocated
  /// blocks ran out, which the sizing above rules out.
  bool push(std::size_t producer, std::uint32_t level, std::uint32_t item) noexcept {
    Lane& lane = *lanes_[level];
    if (!lane.queue.try_enqueue(lane.producers[producer], item)) {
      return false;
    }
    // Seq_cst: pairs with the seq_cst load in has_work() after a worker
    // counted itself as a waiter (futex::Waiter protocol).
    queued_.fetch_add(1, std::memory_order_seq_cst);
    return true;
  }

  /// The oldest item of the highest-priority lane that has one.
  bool pop(std::size_t consumer, std::uint32_t& item) noexcept {
    for (auto& lane : lanes_) {
      if (lane->queue.try_dequeue(lane->consumers[consumer], item)) {
        // Relaxed: only a hint for sleeping workers; a stale high value
        // costs one extra look at the queues.
        queued_.fetch_sub(1, std::memory_order_relaxed);
        return true;
      }
    }
    return false;
  }

  /// Whether some lane may hold an item.
  [[nodiscard]] bool has_work() const noexcept {
    // Seq_cst: see push().
    return queued_.load(std::memory_order_seq_cst) > 0;
  }

 private:
  struct Lane {
    explicit Lane(std::size_t capacity) : queue(capacity) {}
    Queue queue;
    std::vector<moodycamel::ProducerToken> producers;
    std::vector<moodycamel::ConsumerToken> consumers;
  };
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::atomic<std::int64_t> queued_{0};
};

}  // namespace axon::detail
