// ShmPublisherPort: loan and chunk reuse, publish and the dispatch to each
// subscriber's queue. The data path: one translation unit,
// so that its helpers inline.
#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cassert>
#include <mutex>
#include <string>

#include "src/base/clock.hpp"
#include "src/base/futex.hpp"
#include "src/base/log.hpp"
#include "transports/shm/connections.hpp"
#include "transports/shm/shared_checks.hpp"
#include "transports/shm/shm_ports.hpp"

namespace axon::shm {

LoanResult<LoanedChunk> ShmPublisherPort::loan(std::size_t payload_bytes) noexcept {
  ChunkPool& chunks = pool_->pool;
  if (reservation_.serves(payload_bytes)) {
    if (ChunkHeader* chunk = reservation_.take(); chunk != nullptr) {
      // publisher_block was set by reserve() and stays ours.
      return LoanedChunk{.payload = chunks.payload(chunk), .capacity_bytes = chunk->capacity_bytes, .handle = chunk};
    }
    if (beyond_reservation_ == BeyondReservation::kRefuse) {
      last_exhausted_ = LastExhausted{.payload_bytes = payload_bytes, .were_cached = 0, .reservation_only = true};
      return kPoolExhausted;  // an outcome: nothing formatted
    }
  }
  if (payload_bytes > chunks.largest_payload()) {
    // An error, not an outcome: formatting the message may allocate.
    return Error(ErrorCode::kPayloadTooLarge,
                 fmt::format("topic '{}': a message of {} bytes is larger than the largest chunk class ({} "
                             "bytes); add a larger class to pool.chunk_classes in the deployment config (or "
                             "NodeOptions::chunk_classes)",
                             topic_name_, payload_bytes, chunks.largest_payload()));
  }
  ChunkHeader* chunk = reuse_cached(payload_bytes);
  if (chunk == nullptr) {
    chunk = chunks.allocate(payload_bytes, fallback_);
  }
  if (chunk == nullptr) {
    // Let the cache go (its chunks may fit another class's request) and
    // reclaim subscribers that left, then try once more.
    const ChunkPool::ClassRange range = chunks.classes_for(payload_bytes, fallback_);
    std::uint32_t were_cached = 0;
    for (std::uint32_t c = range.first; c <= range.last && c < kMaxSizeClasses; ++c) {
      were_cached += cached_per_class_[c];
    }
    while (cache_count_ > 0) {
      uncache_oldest();
    }
    reclaim_closing();
    chunk = chunks.allocate(payload_bytes, fallback_);
    if (chunk == nullptr) {
      // Back-pressure: an outcome, told without formatting (no allocation);
      // explain_exhausted() formats who holds the chunks when asked.
      last_exhausted_ =
          LastExhausted{.payload_bytes = payload_bytes, .were_cached = were_cached, .reservation_only = false};
      return kPoolExhausted;
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
  if (!ChunkPool::only_loan_left(oldest) || oldest->size_class != pool_->pool.class_for(payload_bytes)) {
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
  auto* header = static_cast<ChunkHeader*>(chunk.handle);
  if (!reservation_.give_back(header)) {
    pool_->pool.drop_holders(header, kLoanBit);
  }
}

void ShmPublisherPort::put_back(ChunkHeader* chunk, bool keep) noexcept {
  if (reservation_.give_back(chunk)) {
    return;  // keeps its loan bit: never on the shared free list while we live
  }
  if (keep) {
    cache(chunk);
  } else {
    pool_->pool.drop_holders(chunk, kLoanBit);  // a history or pin keeps it; never reused from the cache
  }
}

PublishResult ShmPublisherPort::publish(LoanedChunk loaned, std::size_t payload_bytes,
                                        std::size_t payload_offset) noexcept {
  return publish_with(loaned, payload_bytes, payload_offset, 0);
}

PublishResult ShmPublisherPort::publish_pinned(LoanedChunk loaned, std::size_t payload_bytes,
                                               std::size_t payload_offset, std::uint32_t pins) noexcept {
  return publish_with(loaned, payload_bytes, payload_offset, pins);
}

void ShmPublisherPort::unpin(void* handle) noexcept {
  auto* chunk = static_cast<ChunkHeader*>(handle);
  std::atomic<std::uint32_t>& pins = pin_counts_[chunk->chunk_index];
  // acq_rel: every other unpinner's last use of the chunk (a write the card
  // completed) happens before the last one drops the bit, which releases the
  // chunk to its next holder (drop_holders() is acq_rel itself). Pairs with
  // the store in publish_with(), which the unpinner got through the link.
  const std::uint32_t before = pins.fetch_sub(1, std::memory_order_acq_rel);
  assert(before > 0 && "unpin() of a chunk without a pin of publish_pinned()");
  if (before == 1) {
    pool_->pool.drop_holders(chunk, kNetworkBit);  // the last holder frees it
  }
}

std::uint32_t ShmPublisherPort::pins_of(const void* handle) const noexcept {
  // Relaxed: a statistic; unpinners may be changing it.
  return pin_counts_[static_cast<const ChunkHeader*>(handle)->chunk_index].load(std::memory_order_relaxed);
}

PublishResult ShmPublisherPort::publish_with(LoanedChunk loaned, std::size_t payload_bytes, std::size_t payload_offset,
                                             std::uint32_t pins) noexcept {
  auto* chunk = static_cast<ChunkHeader*>(loaned.handle);
  ChunkPool& chunks = pool_->pool;
  // A chunk of another pool or publisher block would record the wrong block
  // (its holder bits would leak on reclaim) and be looked up in the wrong
  // pool by subscribers: refuse it untouched; it belongs to its lender.
  if (!chunks.contains(chunk) || chunk->publisher_block.load(std::memory_order_relaxed) != block_index_) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("topic '{}': publish() of a chunk this publisher did not loan; publish it through "
                             "the publisher that loaned it",
                             topic_name_));
  }
  if (payload_offset > chunk->capacity_bytes || payload_bytes > chunk->capacity_bytes - payload_offset) {
    put_back(chunk, false);
    return Error(ErrorCode::kPayloadTooLarge, "payload_bytes and payload_offset exceed the loaned chunk");
  }
  // The service thread adopts joiners and reclaims closing connections of
  // an idle publisher: exclude it for the length of the publish (it holds the
  // flag for one reclaim or a few pushes at most).
  // lock() acquires, pairing with the service thread's unlock() (release):
  // what it did to the block is visible; our unlock() at the end releases our
  // pushes to it. Uncontended in steady state: one exchange on a line of this
  // process.
  const std::lock_guard<SpinFlag> busy(busy_.flag);
  // Relaxed: a joiner seen late is adopted by the next publish or round.
  if (history_depth_ > 0 && load_connections(block_->joining_bits, std::memory_order_relaxed).any()) {
    adopt_joiners();
  }
  const RingEntry entry{.chunk_index = chunk->chunk_index,
                        .payload_bytes = static_cast<std::uint32_t>(payload_bytes),
                        .payload_offset = static_cast<std::uint32_t>(payload_offset),
                        .reserved = 0,
                        .publish_time_ns = monotonic_now_ns(),
                        .sequence = ++sequence_};
  // Relaxed: for tools only (see ChunkHeader); subscribers read the entry.
  chunk->publish_time_ns.store(entry.publish_time_ns, std::memory_order_relaxed);
  const std::uint64_t history_bit = remember(chunk, entry);
  std::uint64_t network_bit = 0;
  if (pins > 0) {
    // Relaxed: no unpinner knows the chunk yet; each gets its handle after
    // this returns, through a link (a mutex, the device's completion), which
    // orders this store before its unpin().
    pin_counts_[chunk->chunk_index].store(pins, std::memory_order_relaxed);
    network_bit = kNetworkBit;
  }
  // Acquire pairs with the release fetch_or in create_connection(); the
  // three words share one line. Masked: a stray bit above the connections'
  // (other processes write these words) must not become a loan or history
  // bit, nor index connection_of_bit.
  const ConnectionSet active = load_connections(block_->active_bits, std::memory_order_acquire);
  // Every connection we are about to push to holds the chunk from here on;
  // plain stores suffice because until the first push the chunk is ours
  // alone (with up to 61 connections: one release store of word 0, as ever).
  ChunkPool::set_holders(chunk, kLoanBit | history_bit | network_bit, active);
  PublishStatus status;
  Delivery delivery{
      .entry = entry, .now_ns = entry.publish_time_ns, .delivered = {}, .not_delivered = {}, .waiting = {}};
  // Every queue with room (or a drop policy) first, so that no subscriber
  // waits behind another one's blocking policy; then the blocking ones.
  active.for_each([&](std::uint32_t bit) { offer(bit, delivery, status); });
  wake(delivery.delivered);
  if (delivery.waiting.any()) {
    const ConnectionSet before = delivery.delivered;
    wait_for_room(delivery, status);
    wake(delivery.delivered.minus(before));
  }
  if (delivery.not_delivered.any()) {
    release_undelivered(chunk, delivery.not_delivered);
  }
  count(status, payload_bytes);
  put_back(chunk, (history_bit | network_bit) == 0);
  // Subscribers that stayed full for their whole block_timeout_ns (reliable
  // ones too) are in status.timed_out: an outcome, never an error.
  return status;
}

void ShmPublisherPort::release_undelivered(ChunkHeader* chunk, const ConnectionSet& not_delivered) noexcept {
  // Our loan bit keeps the chunk alive (word 0, and its share of a wide
  // count), so this cannot free it.
  pool_->pool.drop_connections(chunk, not_delivered);
  bool reclaimed = false;
  not_delivered.for_each([&](std::uint32_t bit) {
    if (connection(bit).state.load(std::memory_order_acquire) != ConnectionState::kActive) {
      add(totals_.rejected_reclaimed, reclaim_connection(*pool_, block_index_, bit));
      reclaimed = true;
    }
  });
  if (reclaimed) {
    announce_room();
  }
}

namespace {

/// Stands in for a connection whose index is corrupt: never kActive, so
/// nothing is pushed to it and its bit is reclaimed. Only read.
Connection g_unusable_connection;

[[gnu::cold, gnu::noinline]] Connection& unusable_connection(std::uint32_t block, std::uint32_t bit,
                                                             std::uint16_t index, std::uint32_t count) noexcept {
  report_corruption(
      Corruption::kConnectionIndex,
      fmt::format("publisher block {} maps bit {} to connection {} (at most {})", block, bit, index, count));
  return g_unusable_connection;
}

}  // namespace

Connection& ShmPublisherPort::connection(std::uint32_t bit) const noexcept {
  // Relaxed: written before the bit was set (see create_connection()), by the
  // connection's creator, maybe another process: checked before it indexes.
  const std::uint16_t index = block_->connection_of_bit[bit].load(std::memory_order_relaxed);
  if (index >= pool_->connection_count()) [[unlikely]] {
    // kNoConnection: counters() on another thread met a bit being reclaimed.
    return index == kNoConnection ? g_unusable_connection
                                  : unusable_connection(block_index_, bit, index, pool_->connection_count());
  }
  return pool_->connection(index);
}

void ShmPublisherPort::offer(std::uint32_t bit, Delivery& delivery, PublishStatus& status) noexcept {
  const HolderBit holder = holder_bit(bit);
  Connection& conn = connection(bit);
  // Acquire pairs with the release that moved it to kClosing.
  if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
    delivery.not_delivered.add(holder);
    return;
  }
  if (conn.ring.try_push(pool_->queue_slots, delivery.entry)) {
    delivered(conn, holder, delivery, status);
    return;
  }
  switch (conn.overflow) {
    case OverflowPolicy::kDropOldest: evict_and_push(conn, holder, delivery, status); return;
    case OverflowPolicy::kBlockPublisher:
      if (conn.full_since_ns == 0) {
        conn.full_since_ns = delivery.now_ns;
      }
      if (conn.quarantined.load(std::memory_order_relaxed) != 0) {
        evict_and_push(conn, holder, delivery, status);
      } else {
        delivery.waiting.add(holder);
      }
      return;
    case OverflowPolicy::kRejectNewest: break;
  }
  bump(conn.dropped_full);
  ++status.dropped;
  delivery.not_delivered.add(holder);
}

void ShmPublisherPort::evict_and_push(Connection& conn, HolderBit holder, Delivery& delivery,
                                      PublishStatus& status) noexcept {
  RingEntry oldest;
  while (!conn.ring.try_push(pool_->queue_slots, delivery.entry)) {
    if (!conn.ring.producer_range_fits(pool_->queue_slots)) [[unlikely]] {
      // Its slot range was corrupted after it was created: nothing to push
      // to or evict from, so the message is dropped for this subscriber.
      bump(conn.dropped_full);
      ++status.dropped;
      delivery.not_delivered.add(holder);
      return;
    }
    if (conn.ring.evict_oldest(pool_->queue_slots, oldest)) {
      // We took the entry's reference from the subscriber; give it back.
      if (ChunkHeader* evicted = pool_->pool.chunk_by_index(oldest.chunk_index)) {
        pool_->pool.drop_holder(evicted, holder);
      }
      bump(conn.dropped_oldest);
      ++status.evicted;
    }
  }
  delivered(conn, holder, delivery, status);
}

void ShmPublisherPort::delivered(Connection& conn, HolderBit holder, Delivery& delivery,
                                 PublishStatus& status) noexcept {
  delivery.delivered.add(holder);
  ++status.delivered;
  bump(conn.delivered);
  const std::uint32_t depth = conn.ring.limit();
  const std::uint32_t threshold = std::max<std::uint32_t>(1, depth * high_water_percent_ / 100);
  // The estimate is an upper bound: read the subscriber's index (a shared
  // line) only when the queue may have reached the high-water mark.
  std::uint64_t fill = conn.ring.fill_estimate();
  if (fill >= threshold) {
    fill = conn.ring.refresh_fill();
  }
  if (fill > conn.high_water.load(std::memory_order_relaxed)) {
    conn.high_water.store(static_cast<std::uint32_t>(fill), std::memory_order_relaxed);
  }
  if (fill < depth) {
    conn.full_since_ns = 0;
  }
  if (conn.quarantined.load(std::memory_order_relaxed) != 0 && fill <= depth / 2) {
    conn.quarantined.store(0, std::memory_order_relaxed);
    logger().info("topic '{}': subscriber {:#x} drained its queue; no longer quarantined", topic_name_,
                  subscriber_id(conn));
  }
  if (fill < threshold) {
    conn.above_high_water = 0;
    return;
  }
  ++status.full;
  if (conn.above_high_water == 0) {
    conn.above_high_water = 1;
    if (backpressure_) {
      backpressure_(BackpressureEvent{
          .subscriber_id = subscriber_id(conn), .queued = static_cast<std::uint32_t>(fill), .depth = depth});
    }
  }
}

void ShmPublisherPort::wake(const ConnectionSet& delivered) noexcept {
  if (!delivered.any()) {
    return;
  }
  // Orders our ring pushes before the waiter counts we read (see
  // futex::notify_if_waiting()).
  futex::full_fence();
  const std::uint32_t subscriber_limit = domain_.limits().subscribers;  // fixed once joined
  delivered.for_each([&](std::uint32_t bit) {
    const Connection& conn = connection(bit);
    // The slot was written by the subscriber's process; a corrupt one (the
    // liveness round closes its connection) wakes nobody.
    if (conn.subscriber_slot < subscriber_limit) [[likely]] {
      futex::notify_if_waiting(domain_.subscriber_wake(conn.subscriber_slot));
    }
  });
}

void ShmPublisherPort::count(const PublishStatus& status, std::size_t payload_bytes) noexcept {
  // The statistics entry is the only copy (counters() reads it back).
  PublisherStats::Live& live = entry_.live;
  bump(live.published);
  add(live.published_bytes, payload_bytes);  // the same cache line as `published`: no extra line written
  add(live.queued, status.delivered);
  add(live.dropped_full, status.dropped - status.timed_out);
  add(live.dropped_oldest, status.evicted);
  add(live.dropped_timeout, status.timed_out);
}

std::uint64_t ShmPublisherPort::remember(ChunkHeader* chunk, const RingEntry& entry) noexcept {
  if (history_depth_ == 0) {
    return 0;
  }
  if (history_count_ == history_depth_) {
    pool_->pool.drop_holders(history_[history_head_].chunk, kHistoryBit);  // the oldest leaves the history
    history_head_ = (history_head_ + 1) % kMaxDurabilityDepth;
    --history_count_;
  }
  history_[(history_head_ + history_count_) % kMaxDurabilityDepth] = Kept{.chunk = chunk, .entry = entry};
  ++history_count_;
  return kHistoryBit;
}

std::uint32_t ShmPublisherPort::subscriber_count() const noexcept {
  // Acquire: see create_connection().
  return load_connections(block_->active_bits, std::memory_order_acquire).count();
}

}  // namespace axon::shm
