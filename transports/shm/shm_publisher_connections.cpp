// ShmPublisherPort outside publish(): its registry entry from construction
// to retirement, and its connections: late joiners of a transient-local
// publisher get the history, closing connections are reclaimed, and
// subscribers waiting for room are told.
#include <fmt/format.h>

#include <algorithm>

#include "src/base/log.hpp"
#include "transports/shm/connections.hpp"
#include "transports/shm/shared_checks.hpp"
#include "transports/shm/shm_ports.hpp"

namespace axon::shm {

ShmPublisherPort::ShmPublisherPort(NodeParts node, std::uint32_t block, SlotRef registry_ref, std::uint32_t topic,
                                   std::string topic_name, const PublisherQos& qos)
    : owner_(std::move(node.owner)),
      pool_(std::move(node.pool)),
      block_(&pool_->block(block)),
      block_index_(block),
      registry_ref_(registry_ref),
      publisher_id_((std::uint64_t{registry_ref.slot} << 32) | registry_ref.generation),
      topic_(topic),
      topic_name_(std::move(topic_name)),
      fallback_(node.domain.config().chunk_fallback),
      pin_counts_(std::make_unique<std::atomic<std::uint32_t>[]>(pool_->pool.total_chunks())),
      high_water_percent_(qos.high_water_percent),
      stats_(node.stats),
      entry_(node.stats.open_publisher(
          block, stats_identity(registry_ref.slot, registry_ref.generation, topic, topic_name_, 0))),
      history_depth_(block_->history_depth),
      busy_(node.busy),
      domain_(node.domain),
      durable_(node.durable),
      own_(node.own) {
  stats_.add_source(this);
}

Result<void> ShmPublisherPort::reserve(std::size_t max_payload_bytes, const PublisherQos& qos) {
  beyond_reservation_ = qos.beyond_reservation;
  if (qos.reserved_chunks > 0) {
    if (max_payload_bytes == 0) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("topic '{}': PublisherQos::reserved_chunks needs max_payload_bytes (the message "
                               "type has no fixed size) to know which chunk class to reserve",
                               topic_name_));
    }
    if (auto reserved =
            reservation_.reserve(pool_->pool, max_payload_bytes, qos.reserved_chunks,
                                 static_cast<std::uint16_t>(block_index_), topic_name_, domain_.config().node_name);
        !reserved) {
      return reserved.error();
    }
  }
  own_.name_block(block_index_, topic_name_, reservation_.size_class(), reservation_.count());
  return {};
}

ShmPublisherPort::~ShmPublisherPort() {
  stats_.remove_source(this);  // first: the service thread refreshes no more
  stats_.close_publisher(block_index_);
  if (history_depth_ > 0) {
    durable_.forget(this);
  }
  // Chunks still in flight go back through their last holder from now on.
  while (cache_count_ > 0) {
    uncache_oldest();
  }
  for (std::uint32_t i = 0; i < history_count_; ++i) {
    pool_->pool.drop_holders(history_[(history_head_ + i) % kMaxDurabilityDepth].chunk, kHistoryBit);
  }
  // No loan is out (each keeps the port alive): every reserved chunk is parked.
  reservation_.release_all(pool_->pool);
  own_.forget_block(block_index_);
  auto held = domain_.lock().lock();
  if (!held) {
    // The block is in our own pool: retire it anyway, so that its connections
    // and the block itself are reclaimed. The node's service thread removes
    // the registry entry under the lock before it frees the block.
    // Release pairs with the service thread's acquire (see below).
    block_->state.store(BlockState::kRetired, std::memory_order_release);
    logger().warn(
        "topic '{}': publisher destroyed without the domain lock ({}); the node's next liveness round "
        "removes it from the registry",
        topic_name_, held.error().message());
    return;
  }
  Registry& registry = domain_.registry(*held);
  if (registry.publisher(*held, registry_ref_.slot).generation == registry_ref_.generation) {
    registry.remove_publisher(*held, registry_ref_.slot);
  }
  // Release pairs with the service thread's acquire: our pushes are over,
  // it reclaims the connections once their subscribers let go.
  block_->state.store(BlockState::kRetired, std::memory_order_release);
}

void ShmPublisherPort::announce_room() noexcept {
  // A subscriber that could not connect for lack of room rescans when it next
  // looks, since the version moved (lock-free, so never lost to a busy lock).
  // Also wake the ones sleeping in an executor, so that they do not wait for
  // their next wake-up; never block the publisher for that: when the lock is
  // busy, their own retry wakes them.
  domain_.room_freed(topic_);
  domain_.lock().with_lock_if_free(
      [&](const DomainLockGuard& held) { domain_.registry(held).wake_subscribers(held, topic_); });
}

void ShmPublisherPort::adopt_joiners() noexcept {
  // Acquire pairs with the creator's release fetch_or in create_connection():
  // the connection's fields are visible.
  const ConnectionSet joining = load_connections(block_->joining_bits, std::memory_order_acquire);
  ConnectionSet adopted;
  joining.for_each([&](std::uint32_t bit) {
    const HolderBit holder = holder_bit(bit);
    Connection& conn = connection(bit);
    // Relaxed: only this thread moves bits from joining to active.
    block_->joining_bits[holder.word].fetch_and(~holder.mask, std::memory_order_relaxed);
    if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
      return;  // left before adoption; reclaimed as kClosing
    }
    // The newest messages that fit the subscriber's queue, oldest first. The
    // history's bit keeps each chunk alive while we add the connection's.
    const std::uint32_t count = std::min(history_count_, conn.ring.limit());
    for (std::uint32_t i = history_count_ - count; i < history_count_; ++i) {
      const Kept& kept = history_[(history_head_ + i) % kMaxDurabilityDepth];
      ChunkPool::add_holder(kept.chunk, holder);  // published to the subscriber by the ring's release
      if (conn.ring.try_push(pool_->queue_slots, kept.entry)) {
        bump(conn.delivered);
      } else {
        pool_->pool.drop_holder(kept.chunk, holder);
      }
    }
    // Release: the connection is complete before we push to it as usual.
    block_->active_bits[holder.word].fetch_or(holder.mask, std::memory_order_release);
    adopted.add(holder);
  });
  wake(adopted);
}

void ShmPublisherPort::adopt_joiners_if_idle() noexcept {
  // Relaxed: a stale zero only delays the adoption to the next round.
  if (history_depth_ == 0 || !load_connections(block_->joining_bits, std::memory_order_relaxed).any()) {
    return;
  }
  // try_lock() acquires, pairing with publish()'s unlock() (release): its
  // history is ours to read.
  if (!busy_.flag.try_lock()) {
    return;  // publish() is running and adopts them itself
  }
  adopt_joiners();
  busy_.flag.unlock();  // release: pairs with the acquire of publish()'s lock()
}

void ShmPublisherPort::reclaim_closing() noexcept {
  // The service thread may be reclaiming or handing the history to one of
  // these connections: reclaim only while it cannot.
  busy_.flag.lock();  // acquire: pairs with the service thread's unlock() (release)
  add(totals_.rejected_reclaimed, reclaim_closing_connections(*pool_, block_index_));
  busy_.flag.unlock();  // release: pairs with the acquire of the service thread's try_lock()
}

}  // namespace axon::shm
