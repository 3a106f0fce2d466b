// ShmPublisherPort: the wait of publish() for subscribers that hold their
// publishers back when full (kBlockPublisher), and their quarantine.
#include <sched.h>

#include <ctime>

#include "src/base/clock.hpp"
#include "src/base/cpu_relax.hpp"
#include "src/base/log.hpp"
#include "transports/shm/shm_ports.hpp"

namespace axon::shm {

void ShmPublisherPort::wait_for_room(Delivery& delivery, PublishStatus& status) noexcept {
  // These subscribers chose to hold their publishers back when full: wait
  // for room, each until its own timeout (or quarantine time), never for a
  // subscriber that left. Spin briefly, then yield, then sleep in short
  // steps so that the subscriber's core gets to drain its queue.
  const std::int64_t started = delivery.now_ns;
  for (std::uint32_t round = 0; delivery.waiting.any(); ++round) {
    const std::int64_t now = monotonic_now_ns();
    const ConnectionSet waiting = delivery.waiting;
    waiting.for_each([&](std::uint32_t bit) {
      const HolderBit holder = holder_bit(bit);
      Connection& conn = connection(bit);
      if (conn.ring.try_push(pool_->queue_slots, delivery.entry)) {
        delivery.waiting.remove(holder);
        delivered(conn, holder, delivery, status);
      } else if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
        delivery.waiting.remove(holder);
        delivery.not_delivered.add(holder);
      } else if (conn.quarantine_after_ns > 0 && now - conn.full_since_ns >= conn.quarantine_after_ns) {
        delivery.waiting.remove(holder);
        quarantine(conn);
        evict_and_push(conn, holder, delivery, status);
      } else if (now - started >= conn.block_timeout_ns) {
        delivery.waiting.remove(holder);
        delivery.not_delivered.add(holder);
        bump(conn.dropped_timeout);
        ++status.dropped;
        ++status.timed_out;
      }
    });
    if (!delivery.waiting.any()) {
      break;
    }
    if (round < 64) {
      cpu_relax();
    } else if (now - started < 50'000) {
      ::sched_yield();
    } else {
      const timespec step{.tv_sec = 0, .tv_nsec = 20'000};
      ::nanosleep(&step, nullptr);
    }
  }
}

void ShmPublisherPort::quarantine(Connection& conn) noexcept {
  conn.quarantined.store(1, std::memory_order_relaxed);
  bump(conn.quarantines);
  logger().warn(
      "topic '{}': subscriber {:#x} stayed full for {} ms; quarantined: its oldest messages are dropped "
      "until it drains its queue",
      topic_name_, subscriber_id(conn), conn.quarantine_after_ns / 1'000'000);
}

}  // namespace axon::shm
