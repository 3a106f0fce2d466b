#include <fmt/format.h>
#include <sched.h>

#include "src/clock.hpp"
#include "src/log.hpp"
#include "transports/shm/shm_ports.hpp"

namespace axon::shm {

ShmPublisherPort::ShmPublisherPort(std::shared_ptr<ShmTransport> transport, std::shared_ptr<MappedPool> pool,
                                   std::uint32_t block, SlotRef registry_ref, std::uint32_t topic,
                                   std::string topic_name)
    : transport_(std::move(transport)),
      pool_(std::move(pool)),
      block_(&pool_->segment->blocks[block]),
      block_index_(block),
      registry_ref_(registry_ref),
      publisher_id_((std::uint64_t{registry_ref.slot} << 32) | registry_ref.generation),
      topic_(topic),
      topic_name_(std::move(topic_name)) {}

ShmPublisherPort::~ShmPublisherPort() {
  // Chunks still in flight go back through their last holder from now on.
  while (cache_count_ > 0) {
    uncache_oldest();
  }
  if (!transport_->lock_.lock()) {
    return;
  }
  DomainLockGuard guard(transport_->lock_);
  if (transport_->registry_.publisher(registry_ref_.slot).generation == registry_ref_.generation) {
    transport_->registry_.remove_publisher(registry_ref_.slot);
  }
  // Release pairs with the service thread's acquire: our pushes are over,
  // it reclaims the connections once their subscribers let go.
  block_->state.store(BlockState::kRetired, std::memory_order_release);
}

Result<LoanedChunk> ShmPublisherPort::loan(std::size_t payload_bytes) noexcept {
  ChunkPool& chunks = pool_->pool;
  if (payload_bytes > chunks.largest_payload()) {
    // An error, not an outcome: formatting the message may allocate.
    return Error(ErrorCode::kPayloadTooLarge,
                 fmt::format("topic '{}': a message of {} bytes is larger than the largest chunk class ({} "
                             "bytes); add a larger class to the node's chunk_classes",
                             topic_name_, payload_bytes, chunks.largest_payload()));
  }
  ChunkHeader* chunk = reuse_cached(payload_bytes);
  if (chunk == nullptr) {
    chunk = chunks.allocate(payload_bytes);
  }
  if (chunk == nullptr) {
    // Let the cache go (its chunks may fit another class's request) and
    // reclaim subscribers that left, then try once more.
    while (cache_count_ > 0) {
      uncache_oldest();
    }
    reclaim_closing();
    chunk = chunks.allocate(payload_bytes);
    if (chunk == nullptr) {
      return Error(ErrorCode::kPoolExhausted, "no free chunk of a fitting class: subscribers hold them all");
    }
  }
  // Relaxed: published to other threads through the ring (release).
  chunk->publisher_block.store(static_cast<std::uint16_t>(block_index_), std::memory_order_relaxed);
  return LoanedChunk{.payload = chunks.payload(chunk), .capacity_bytes = chunk->capacity_bytes, .handle = chunk};
}

ChunkHeader* ShmPublisherPort::reuse_cached(std::size_t payload_bytes) noexcept {
  if (cache_count_ == 0) {
    return nullptr;
  }
  ChunkHeader* oldest = cache_[cache_head_];
  // Acquire pairs with each subscriber's release when it cleared its bit:
  // their reads of the old message are done before we write a new one.
  if (oldest->holders.load(std::memory_order_acquire) != kLoanBit ||
      oldest->size_class != pool_->pool.class_for(payload_bytes)) {
    return nullptr;
  }
  cache_head_ = (cache_head_ + 1) % kCacheSlots;
  --cache_count_;
  --cached_per_class_[oldest->size_class];
  oldest->cached.store(0, std::memory_order_relaxed);  // statistics only
  return oldest;
}

void ShmPublisherPort::cache(ChunkHeader* chunk) noexcept {
  const std::uint32_t limit = pool_->pool.size_class(chunk->size_class).chunk_count / 8;
  if (cached_per_class_[chunk->size_class] >= limit) {
    pool_->pool.drop_holders(chunk, kLoanBit);  // the last holder frees it
    return;
  }
  if (cache_count_ == kCacheSlots) {
    uncache_oldest();
  }
  ++cached_per_class_[chunk->size_class];
  chunk->cached.store(1, std::memory_order_relaxed);  // statistics only
  cache_[(cache_head_ + cache_count_) % kCacheSlots] = chunk;
  ++cache_count_;
}

void ShmPublisherPort::uncache_oldest() noexcept {
  ChunkHeader* oldest = cache_[cache_head_];
  cache_head_ = (cache_head_ + 1) % kCacheSlots;
  --cache_count_;
  --cached_per_class_[oldest->size_class];
  oldest->cached.store(0, std::memory_order_relaxed);
  pool_->pool.drop_holders(oldest, kLoanBit);  // the last holder frees it
}

void ShmPublisherPort::discard(LoanedChunk chunk) noexcept {
  pool_->pool.drop_holders(static_cast<ChunkHeader*>(chunk.handle), kLoanBit);
}

Result<PublishStatus> ShmPublisherPort::publish(LoanedChunk loaned, std::size_t payload_bytes,
                                                std::size_t payload_offset) noexcept {
  auto* chunk = static_cast<ChunkHeader*>(loaned.handle);
  ChunkPool& chunks = pool_->pool;
  if (payload_offset > chunk->capacity_bytes || payload_bytes > chunk->capacity_bytes - payload_offset) {
    chunks.drop_holders(chunk, kLoanBit);
    return Error(ErrorCode::kPayloadTooLarge, "payload_bytes and payload_offset exceed the loaned chunk");
  }
  const RingEntry entry{.chunk_index = chunk->chunk_index,
                        .payload_bytes = static_cast<std::uint32_t>(payload_bytes),
                        .payload_offset = static_cast<std::uint32_t>(payload_offset),
                        .reserved = 0,
                        .publish_time_ns = monotonic_now_ns(),
                        .sequence = ++sequence_};
  chunk->payload_bytes = entry.payload_bytes;
  chunk->payload_offset = entry.payload_offset;
  chunk->sequence = entry.sequence;
  chunk->publish_time_ns = entry.publish_time_ns;
  chunk->publisher_id = publisher_id_;
  PoolSegment* segment = pool_->segment;
  PublishStatus status;
  // Acquire pairs with the release fetch_or in create_connection().
  const std::uint64_t active = block_->active_bits.load(std::memory_order_acquire);
  // Every connection we are about to push to holds the chunk from here on; a
  // plain store suffices because until the first push the chunk is ours alone.
  // Release pairs with the acquire load in reclaim_connection() (which then
  // sees publisher_block).
  chunk->holders.store(kLoanBit | active, std::memory_order_release);
  std::uint64_t not_delivered = 0;
  for (std::uint64_t bits = active; bits != 0; bits &= bits - 1) {
    const auto bit = static_cast<std::uint32_t>(__builtin_ctzll(bits));
    // Relaxed: written before the bit was set (see above).
    Connection& conn = segment->connections[block_->connection_of_bit[bit].load(std::memory_order_relaxed)];
    // Acquire pairs with the release that moved it to kClosing.
    if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
      not_delivered |= std::uint64_t{1} << bit;
      continue;
    }
    const bool pushed =
        conn.ring.try_push(entry) || (conn.overflow == OverflowPolicy::kBlockPublisher && push_blocking(conn, entry));
    // Relaxed counters: statistics with a single writer (this thread).
    if (pushed) {
      conn.delivered.store(conn.delivered.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      ++status.delivered;
    } else {
      not_delivered |= std::uint64_t{1} << bit;
      conn.dropped.store(conn.dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      ++status.dropped;
    }
  }
  if (not_delivered != 0) {
    // Our loan bit keeps the chunk alive, so this cannot free it.
    chunk->holders.fetch_and(~not_delivered, std::memory_order_relaxed);
    for (std::uint64_t bits = not_delivered; bits != 0; bits &= bits - 1) {
      const auto bit = static_cast<std::uint32_t>(__builtin_ctzll(bits));
      const std::uint16_t index = block_->connection_of_bit[bit].load(std::memory_order_relaxed);
      if (segment->connections[index].state.load(std::memory_order_acquire) != ConnectionState::kActive) {
        reclaim_connection(*pool_, block_index_, bit);
      }
    }
  }
  cache(chunk);
  return status;
}

bool ShmPublisherPort::push_blocking(Connection& conn, const RingEntry& entry) noexcept {
  // The subscriber chose to hold its publishers back when full; wait for
  // room, but never past its timeout and never for a subscriber that left.
  const std::int64_t deadline = monotonic_now_ns() + conn.block_timeout_ns;
  for (std::uint32_t spins = 0;; ++spins) {
    if (conn.ring.try_push(entry)) {
      return true;
    }
    if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive || monotonic_now_ns() >= deadline) {
      return false;
    }
    if (spins < 64) {
      __builtin_ia32_pause();
    } else {
      ::sched_yield();
    }
  }
}

void ShmPublisherPort::reclaim_closing() noexcept { reclaim_closing_connections(*pool_, block_index_); }

std::uint32_t ShmPublisherPort::subscriber_count() const noexcept {
  // Acquire: see create_connection().
  return static_cast<std::uint32_t>(__builtin_popcountll(block_->active_bits.load(std::memory_order_acquire)));
}

}  // namespace axon::shm
