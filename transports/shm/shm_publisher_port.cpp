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
  ChunkHeader* chunk = chunks.allocate(payload_bytes);
  if (chunk == nullptr) {
    // Subscribers that left may still pin chunks: reclaim them and retry.
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
  chunk->payload_bytes = static_cast<std::uint32_t>(payload_bytes);
  chunk->payload_offset = static_cast<std::uint32_t>(payload_offset);
  chunk->sequence = ++sequence_;
  chunk->publish_time_ns = monotonic_now_ns();
  chunk->publisher_id = publisher_id_;
  const std::uint64_t offset = chunks.offset_of(chunk);
  PoolSegment* segment = pool_->segment;
  PublishStatus status;
  // Acquire pairs with the release fetch_or in create_connection().
  std::uint64_t bits = block_->active_bits.load(std::memory_order_acquire);
  for (; bits != 0; bits &= bits - 1) {
    const auto bit = static_cast<std::uint32_t>(__builtin_ctzll(bits));
    const std::uint64_t mask = std::uint64_t{1} << bit;
    // Relaxed: written before the bit was set (see above).
    Connection& conn = segment->connections[block_->connection_of_bit[bit].load(std::memory_order_relaxed)];
    // Acquire pairs with the release that moved it to kClosing.
    if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
      reclaim_connection(*pool_, block_index_, bit);
      continue;
    }
    // The bit goes in before the push: once pushed, the subscriber may pop
    // and clear it at any time. Release pairs with the acquire load in
    // reclaim_connection() (which then sees publisher_block).
    chunk->holders.fetch_or(mask, std::memory_order_release);
    const bool pushed = conn.ring.try_push(offset) ||
                        (conn.overflow == OverflowPolicy::kBlockPublisher && push_blocking(conn, offset));
    // Relaxed counters: statistics with a single writer (this thread).
    if (pushed) {
      conn.delivered.store(conn.delivered.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      ++status.delivered;
    } else {
      // Our loan bit keeps the chunk alive, so this cannot free it.
      chunk->holders.fetch_and(~mask, std::memory_order_relaxed);
      conn.dropped.store(conn.dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      ++status.dropped;
    }
  }
  chunks.drop_holders(chunk, kLoanBit);
  return status;
}

bool ShmPublisherPort::push_blocking(Connection& conn, std::uint64_t offset) noexcept {
  // The subscriber chose to hold its publishers back when full; wait for
  // room, but never past its timeout and never for a subscriber that left.
  const std::int64_t deadline = monotonic_now_ns() + conn.block_timeout_ns;
  for (std::uint32_t spins = 0;; ++spins) {
    if (conn.ring.try_push(offset)) {
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

void ShmPublisherPort::reclaim_closing() noexcept {
  PoolSegment* segment = pool_->segment;
  std::uint64_t bits = block_->allocated_bits.load(std::memory_order_acquire);
  for (; bits != 0; bits &= bits - 1) {
    const auto bit = static_cast<std::uint32_t>(__builtin_ctzll(bits));
    const std::uint16_t index = block_->connection_of_bit[bit].load(std::memory_order_relaxed);
    if (index != kNoConnection &&
        segment->connections[index].state.load(std::memory_order_acquire) == ConnectionState::kClosing) {
      reclaim_connection(*pool_, block_index_, bit);
    }
  }
}

std::uint32_t ShmPublisherPort::subscriber_count() const noexcept {
  // Acquire: see create_connection().
  return static_cast<std::uint32_t>(__builtin_popcountll(block_->active_bits.load(std::memory_order_acquire)));
}

}  // namespace axon::shm
