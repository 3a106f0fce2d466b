#include "transports/shm/own_pool.hpp"

#include <fmt/format.h>

#include "transports/shm/chunk_reservation.hpp"
#include "transports/shm/connections.hpp"
#include "transports/shm/shared_checks.hpp"

namespace axon::shm {

std::uint32_t OwnPool::free_block(const DomainLockGuard& /*held*/) const noexcept {
  for (std::uint32_t b = 0; b < pool_->block_count(); ++b) {
    if (pool_->block(b).state.load(std::memory_order_acquire) == BlockState::kFree) {
      return b;
    }
  }
  return kNoBlock;
}

std::vector<PoolClassStats> OwnPool::stats() const {
  std::vector<PoolClassStats> stats;
  const ChunkPool& pool = pool_->pool;
  for (std::uint32_t i = 0; i < pool.class_count(); ++i) {
    const SizeClass& sc = pool.size_class(i);
    PoolClassStats one{.payload_bytes = sc.payload_capacity,
                       .total_chunks = sc.chunk_count,
                       .free_chunks = pool.free_chunks(i),
                       .reserved_chunks = 0,
                       .topics = shares(i)};
    for (const PoolTopicShare& share : one.topics) {
      one.reserved_chunks += share.reserved_chunks;
    }
    stats.push_back(std::move(one));
  }
  return stats;
}

void OwnPool::name_block(std::uint32_t block, std::string topic, std::uint32_t reserved_class, std::uint32_t reserved) {
  const std::lock_guard<std::mutex> lock(topics_mutex_);
  topics_[block] = {.topic = std::move(topic), .reserved_class = reserved_class, .reserved = reserved};
}

void OwnPool::forget_block(std::uint32_t block) {
  const std::lock_guard<std::mutex> lock(topics_mutex_);
  topics_[block] = {};
}

std::vector<PoolTopicShare> OwnPool::shares(std::uint32_t size_class, std::uint32_t except_block) const {
  const ChunkPool& pool = pool_->pool;
  const SizeClass& sc = pool.size_class(size_class);
  std::vector<std::uint32_t> in_use(pool_->block_count());
  for (std::uint32_t k = 0; k < sc.chunk_count; ++k) {
    const ChunkHeader* chunk = pool.chunk_by_index(sc.first_index + k);
    // Acquire: a statistics read that sees releases made by other threads.
    const std::uint64_t holders = chunk->holders.load(std::memory_order_acquire);
    // Relaxed: statistics; a block number out of range (another process
    // wrote the header) is not counted.
    const std::uint32_t block = chunk->publisher_block.load(std::memory_order_relaxed);
    // Relaxed: statistics (1: in the reuse cache, 2: a parked reserved chunk).
    const std::uint32_t mark = chunk->cached.load(std::memory_order_relaxed);
    const bool wide = ChunkPool::held_wide(chunk, holders);
    const bool unused = holders == kLoanBit && !wide && (mark == 1 || mark == ChunkReservation::kReservedMark);
    if ((holders == 0 && !wide) || unused || block >= pool_->block_count()) {
      continue;  // free, or waiting unused in a publisher's reuse cache or reservation
    }
    ++in_use[block];
  }
  std::vector<PoolTopicShare> out;
  const std::lock_guard<std::mutex> lock(topics_mutex_);
  for (std::uint32_t b = 0; b < pool_->block_count(); ++b) {
    const BlockTopic& named = topics_[b];
    const std::uint32_t reserved = named.reserved_class == size_class ? named.reserved : 0;
    if (b == except_block || named.topic.empty() || (reserved == 0 && in_use[b] == 0)) {
      continue;
    }
    out.push_back({.topic = named.topic, .reserved_chunks = reserved, .chunks_in_use = in_use[b]});
  }
  return out;
}

std::string OwnPool::holders_text(std::uint32_t size_class, std::uint32_t except_block) const {
  std::string text;
  for (const PoolTopicShare& share : shares(size_class, except_block)) {
    text += fmt::format("{}'{}' {}", text.empty() ? "" : ", ", share.topic, share.chunks_in_use);
    if (share.reserved_chunks > 0) {
      text += fmt::format(" ({} reserved)", share.reserved_chunks);
    }
  }
  return text.empty() ? std::string("none") : text;
}

void OwnPool::close_connections_of_gone_subscribers(const DomainLockGuard& held) noexcept {
  const Registry& registry = domain_.registry(held);
  for (std::uint32_t c = 0; c < pool_->connection_count(); ++c) {
    Connection& conn = pool_->connection(c);
    // Acquire: the fields of an active connection were written before it.
    if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
      continue;
    }
    // A subscriber's process wrote the connection: a slot out of range names
    // no subscriber, so the connection is closed like one of a gone subscriber.
    const bool corrupt = conn.subscriber_slot >= registry.limits().subscribers;
    if (corrupt) {
      report_corruption(Corruption::kConnection,
                        fmt::format("connection {} of node '{}' names subscriber slot {} (at most {}); closing it", c,
                                    domain_.config().node_name, conn.subscriber_slot, registry.limits().subscribers));
    }
    if (corrupt || !registry.subscriber_is(held, {conn.subscriber_slot, conn.subscriber_generation})) {
      auto expected = ConnectionState::kActive;
      // Release pairs with the acquire in the publisher's publish(): it will
      // reclaim the connection. Fails harmlessly if the subscriber closed it.
      conn.state.compare_exchange_strong(expected, ConnectionState::kClosing, std::memory_order_release,
                                         std::memory_order_relaxed);
    }
  }
}

void OwnPool::reclaim_retired_blocks(const DomainLockGuard& held) noexcept {
  Registry& registry = domain_.registry(held);
  for (std::uint32_t b = 0; b < pool_->block_count(); ++b) {
    PublisherBlock& block = pool_->block(b);
    // Acquire pairs with the publisher's release store of kRetired: its last
    // pushes are done, so this thread may reclaim.
    if (block.state.load(std::memory_order_acquire) != BlockState::kRetired) {
      continue;
    }
    // A publisher destroyed while the domain lock could not be taken left its
    // registry entry behind: remove it (we hold the lock) before the block
    // may be reused, so subscribers let go of it.
    if (publisher_entry_of(held, b) != nullptr) {
      registry.remove_publisher(held, block.publisher_slot);
    }
    reclaim_closing_connections(*pool_, b);
    if (!load_connections(block.allocated_bits, std::memory_order_relaxed).any()) {
      block.state.store(BlockState::kFree, std::memory_order_relaxed);  // reused under the domain lock only
    }
  }
}

void OwnPool::reclaim_closing_of_idle_publishers(const DomainLockGuard& held) noexcept {
  for (std::uint32_t b = 0; b < pool_->block_count(); ++b) {
    PublisherBlock& block = pool_->block(b);
    // Acquire pairs with advertise()'s release store of kActive. Retired
    // blocks are reclaimed by reclaim_retired_blocks() without the flag.
    if (block.state.load(std::memory_order_acquire) != BlockState::kActive || !has_closing_connection(*pool_, block)) {
      continue;
    }
    SpinFlag& busy = busy_[b].flag;
    // try_lock() acquires, pairing with the publisher's unlock() (release):
    // its pushes and reclaims are over. A busy publisher reclaims itself when
    // it meets the closing connection, or we try again next round.
    if (!busy.try_lock()) {
      continue;
    }
    // Relaxed: a statistic read by the publisher's counters().
    busy_[b].rejected_reclaimed.fetch_add(reclaim_closing_connections(*pool_, b), std::memory_order_relaxed);
    busy.unlock();  // release: pairs with the acquire of the publisher's next lock()
    // Else a subscriber refused for lack of room waits for its own retry: the
    // publisher, idle, has nothing left to reclaim and so nothing to announce.
    announce_room(held, b);
  }
}

void OwnPool::announce_room(const DomainLockGuard& held, std::uint32_t b) noexcept {
  Registry& registry = domain_.registry(held);
  const EndpointEntry* pub = publisher_entry_of(held, b);
  // The entry is another process's to write too: its topic is checked before
  // it indexes the topics.
  if (pub == nullptr || !invalid_publisher_entry(*pub, registry.limits()).empty()) {
    return;
  }
  registry.room_freed(pub->topic);
  registry.wake_subscribers(held, pub->topic);
}

const EndpointEntry* OwnPool::publisher_entry_of(const DomainLockGuard& held, std::uint32_t b) const noexcept {
  const Registry& registry = domain_.registry(held);
  const PublisherBlock& block = pool_->block(b);
  // Our pool, but a segment other processes can write: the slot is checked
  // before it indexes the registry.
  if (block.publisher_slot >= registry.limits().publishers) {
    return nullptr;
  }
  const EndpointEntry& pub = registry.publisher(held, block.publisher_slot);
  const bool ours = pub.state == EntryState::kActive && pub.generation == block.publisher_generation &&
                    pub.participant == domain_.self().slot && pub.pool_block == b;
  return ours ? &pub : nullptr;
}

}  // namespace axon::shm
