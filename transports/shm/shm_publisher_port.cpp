#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <ctime>
#include <mutex>
#include <string>

#include "src/clock.hpp"
#include "src/cpu_relax.hpp"
#include "src/futex.hpp"
#include "src/log.hpp"
#include "transports/shm/shared_checks.hpp"
#include "transports/shm/shm_ports.hpp"

namespace axon::shm {

ShmPublisherPort::ShmPublisherPort(std::shared_ptr<ShmTransport> transport, std::shared_ptr<MappedPool> pool,
                                   std::uint32_t block, SlotRef registry_ref, std::uint32_t topic,
                                   std::string topic_name, const PublisherQos& qos)
    : transport_(std::move(transport)),
      pool_(std::move(pool)),
      block_(&pool_->segment->blocks[block]),
      block_index_(block),
      registry_ref_(registry_ref),
      publisher_id_((std::uint64_t{registry_ref.slot} << 32) | registry_ref.generation),
      topic_(topic),
      topic_name_(std::move(topic_name)),
      fallback_(transport_->config_.chunk_fallback),
      high_water_percent_(qos.high_water_percent),
      history_depth_(block_->history_depth),
      busy_(transport_->block_busy_[block].flag) {}

ShmPublisherPort::~ShmPublisherPort() {
  if (history_depth_ > 0) {
    transport_->forget_durable(this);
  }
  // Chunks still in flight go back through their last holder from now on.
  while (cache_count_ > 0) {
    uncache_oldest();
  }
  for (std::uint32_t i = 0; i < history_count_; ++i) {
    pool_->pool.drop_holders(history_[(history_head_ + i) % kMaxDurabilityDepth].chunk, kHistoryBit);
  }
  auto locked = transport_->lock_.lock();
  if (!locked) {
    // The block is in our own pool: retire it anyway, so that its connections
    // and the block itself are reclaimed. The node's service thread removes
    // the registry entry under the lock before it frees the block.
    // Release pairs with the service thread's acquire (see below).
    block_->state.store(BlockState::kRetired, std::memory_order_release);
    logger().warn(
        "topic '{}': publisher destroyed without the domain lock ({}); the node's next liveness round "
        "removes it from the registry",
        topic_name_, locked.error().message());
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

LoanResult<LoanedChunk> ShmPublisherPort::loan(std::size_t payload_bytes) noexcept {
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
      last_exhausted_ = LastExhausted{.payload_bytes = payload_bytes, .were_cached = were_cached};
      return kPoolExhausted;
    }
  }
  // Relaxed: published to other threads through the ring (release).
  chunk->publisher_block.store(static_cast<std::uint16_t>(block_index_), std::memory_order_relaxed);
  return LoanedChunk{.payload = chunks.payload(chunk), .capacity_bytes = chunk->capacity_bytes, .handle = chunk};
}

std::string ShmPublisherPort::explain_exhausted() const {
  if (last_exhausted_.payload_bytes == 0) {
    return fmt::format("topic '{}': no loan found the pool exhausted yet", topic_name_);
  }
  return exhausted(last_exhausted_.payload_bytes, last_exhausted_.were_cached);
}

std::string ShmPublisherPort::exhausted(std::size_t payload_bytes, std::uint32_t were_cached) const {
  const ChunkPool& chunks = pool_->pool;
  const ChunkPool::ClassRange range = chunks.classes_for(payload_bytes, fallback_);
  constexpr std::uint64_t kConnectionBits = kNetworkBit - 1;  // bits 0..60
  std::uint32_t total = 0;
  std::uint32_t loaned = 0;
  std::uint32_t subscribers = 0;
  std::uint32_t kept = 0;
  std::uint32_t others = 0;
  for (std::uint32_t c = range.first; c <= range.last; ++c) {
    const SizeClass& sc = chunks.size_class(c);
    total += sc.chunk_count;
    for (std::uint32_t k = 0; k < sc.chunk_count; ++k) {
      const ChunkHeader* chunk = chunks.chunk_by_index(sc.first_index + k);
      // Acquire: a snapshot for the message that sees other threads' releases.
      const std::uint64_t holders = chunk->holders.load(std::memory_order_acquire);
      if (holders == 0) {
        continue;
      }
      if (chunk->publisher_block.load(std::memory_order_relaxed) != block_index_) {
        ++others;
      } else if ((holders & kConnectionBits) != 0) {
        ++subscribers;
      } else if ((holders & (kHistoryBit | kNetworkBit)) != 0) {
        ++kept;
      } else {
        ++loaned;
      }
    }
  }
  const SizeClass& first = chunks.size_class(range.first);
  const SizeClass& last = chunks.size_class(range.last);
  return fmt::format(
      "topic '{}': no free chunk for a {} B message in the {} chunks of classes {} B..{} B of node '{}' "
      "(a loan falls through at most {} larger class(es) of at most {}x its own: "
      "NodeOptions::chunk_fallback, pool.chunk_fallback): this publisher holds {} in loans not yet "
      "published and had {} in its reuse cache (given back now), its subscribers hold {} (queued or "
      "taken), {} are kept for late joiners or resends, other publishers of the node hold {}; publish or "
      "drop loans sooner, lower the subscribers' depth or max_held_samples, or add chunks to that class "
      "(NodeOptions::chunk_classes, pool.chunk_classes)",
      topic_name_, payload_bytes, total, first.payload_capacity, last.payload_capacity, transport_->config_.node_name,
      fallback_.max_classes, fallback_.max_ratio == 0 ? std::string("any") : std::to_string(fallback_.max_ratio),
      loaned, were_cached, subscribers, kept, others);
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

PublishResult ShmPublisherPort::publish(LoanedChunk loaned, std::size_t payload_bytes,
                                        std::size_t payload_offset) noexcept {
  return publish_with(loaned, payload_bytes, payload_offset, 0);
}

PublishResult ShmPublisherPort::publish_pinned(LoanedChunk loaned, std::size_t payload_bytes,
                                               std::size_t payload_offset) noexcept {
  return publish_with(loaned, payload_bytes, payload_offset, kNetworkBit);
}

void ShmPublisherPort::unpin(void* handle) noexcept {
  pool_->pool.drop_holders(static_cast<ChunkHeader*>(handle), kNetworkBit);  // the last holder frees it
}

PublishResult ShmPublisherPort::publish_with(LoanedChunk loaned, std::size_t payload_bytes, std::size_t payload_offset,
                                             std::uint64_t network_bit) noexcept {
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
    chunks.drop_holders(chunk, kLoanBit);
    return Error(ErrorCode::kPayloadTooLarge, "payload_bytes and payload_offset exceed the loaned chunk");
  }
  // The service thread adopts joiners and reclaims closing connections of
  // an idle publisher: exclude it for the length of the publish (it holds the
  // flag for one reclaim or a few pushes at most). lock() acquires, pairing
  // with the service thread's unlock() (release): what it did to the block
  // is visible; our unlock() at the end releases our pushes to it.
  // Uncontended in steady state: one exchange on a line of this process.
  const std::lock_guard<SpinFlag> busy(busy_);
  // Relaxed: a joiner seen late is adopted by the next publish or round.
  if (history_depth_ > 0 && block_->joining_bits.load(std::memory_order_relaxed) != 0) {
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
  // Acquire pairs with the release fetch_or in create_connection().
  // Masked: a stray bit above the connections' (other processes write this
  // word) must not become a loan or history bit, nor index connection_of_bit.
  const std::uint64_t active = block_->active_bits.load(std::memory_order_acquire) & kConnectionBits;
  // Every connection we are about to push to holds the chunk from here on; a
  // plain store suffices because until the first push the chunk is ours alone.
  // Release pairs with the acquire load in reclaim_connection() (which then
  // sees publisher_block) and with a late joiner's pin (see remember()).
  chunk->holders.store(kLoanBit | history_bit | network_bit | active, std::memory_order_release);
  PublishStatus status;
  Delivery delivery{.entry = entry, .now_ns = entry.publish_time_ns};
  // Every queue with room (or a drop policy) first, so that no subscriber
  // waits behind another one's blocking policy; then the blocking ones.
  for (std::uint64_t bits = active; bits != 0; bits &= bits - 1) {
    offer(static_cast<std::uint32_t>(__builtin_ctzll(bits)), delivery, status);
  }
  wake(delivery.delivered);
  if (delivery.waiting != 0) {
    const std::uint64_t before = delivery.delivered;
    wait_for_room(delivery, status);
    wake(delivery.delivered & ~before);
  }
  if (delivery.not_delivered != 0) {
    // Our loan bit keeps the chunk alive, so this cannot free it.
    chunk->holders.fetch_and(~delivery.not_delivered, std::memory_order_relaxed);
    bool reclaimed = false;
    for (std::uint64_t bits = delivery.not_delivered; bits != 0; bits &= bits - 1) {
      const auto bit = static_cast<std::uint32_t>(__builtin_ctzll(bits));
      if (connection(bit).state.load(std::memory_order_acquire) != ConnectionState::kActive) {
        add(totals_.rejected_reclaimed, reclaim_connection(*pool_, block_index_, bit));
        reclaimed = true;
      }
    }
    if (reclaimed) {
      announce_room();
    }
  }
  count(status);
  if ((history_bit | network_bit) != 0) {
    chunks.drop_holders(chunk, kLoanBit);  // a history keeps it; never reused from the cache
  } else {
    cache(chunk);
  }
  // Subscribers that stayed full for their whole block_timeout_ns (reliable
  // ones too) are in status.timed_out: an outcome, never an error.
  return status;
}

namespace {

/// Stands in for a connection whose index is corrupt: never kActive, so
/// nothing is pushed to it and its bit is reclaimed. Only read.
Connection g_unusable_connection;

[[gnu::cold, gnu::noinline]] Connection& unusable_connection(std::uint32_t block, std::uint32_t bit,
                                                             std::uint16_t index) noexcept {
  report_corruption(Corruption::kConnectionIndex,
                    fmt::format("publisher block {} maps bit {} to connection {} (at most {})", block, bit, index,
                                kMaxConnectionsPerNode));
  return g_unusable_connection;
}

}  // namespace

Connection& ShmPublisherPort::connection(std::uint32_t bit) const noexcept {
  // Relaxed: written before the bit was set (see create_connection()), by the
  // connection's creator, maybe another process: checked before it indexes.
  const std::uint16_t index = block_->connection_of_bit[bit].load(std::memory_order_relaxed);
  if (index >= kMaxConnectionsPerNode) [[unlikely]] {
    // kNoConnection: counters() on another thread met a bit being reclaimed.
    return index == kNoConnection ? g_unusable_connection : unusable_connection(block_index_, bit, index);
  }
  return pool_->segment->connections[index];
}

void ShmPublisherPort::offer(std::uint32_t bit, Delivery& delivery, PublishStatus& status) noexcept {
  const std::uint64_t mask = std::uint64_t{1} << bit;
  Connection& conn = connection(bit);
  // Acquire pairs with the release that moved it to kClosing.
  if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
    delivery.not_delivered |= mask;
    return;
  }
  if (conn.ring.try_push(delivery.entry)) {
    delivered(conn, mask, delivery, status);
    return;
  }
  switch (conn.overflow) {
    case OverflowPolicy::kDropOldest: evict_and_push(conn, mask, delivery, status); return;
    case OverflowPolicy::kBlockPublisher:
      if (conn.full_since_ns == 0) {
        conn.full_since_ns = delivery.now_ns;
      }
      if (conn.quarantined.load(std::memory_order_relaxed) != 0) {
        evict_and_push(conn, mask, delivery, status);
      } else {
        delivery.waiting |= mask;
      }
      return;
    case OverflowPolicy::kRejectNewest: break;
  }
  bump(conn.dropped_full);
  ++status.dropped;
  delivery.not_delivered |= mask;
}

void ShmPublisherPort::evict_and_push(Connection& conn, std::uint64_t mask, Delivery& delivery,
                                      PublishStatus& status) noexcept {
  RingEntry oldest;
  while (!conn.ring.try_push(delivery.entry)) {
    if (conn.ring.evict_oldest(oldest)) {
      // We took the entry's reference from the subscriber; give it back.
      if (ChunkHeader* evicted = pool_->pool.chunk_by_index(oldest.chunk_index)) {
        pool_->pool.drop_holders(evicted, mask);
      }
      bump(conn.dropped_oldest);
      ++status.evicted;
    }
  }
  delivered(conn, mask, delivery, status);
}

void ShmPublisherPort::delivered(Connection& conn, std::uint64_t mask, Delivery& delivery,
                                 PublishStatus& status) noexcept {
  delivery.delivered |= mask;
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

void ShmPublisherPort::wait_for_room(Delivery& delivery, PublishStatus& status) noexcept {
  // These subscribers chose to hold their publishers back when full: wait
  // for room, each until its own timeout (or quarantine time), never for a
  // subscriber that left. Spin briefly, then yield, then sleep in short
  // steps so that the subscriber's core gets to drain its queue.
  const std::int64_t started = delivery.now_ns;
  for (std::uint32_t round = 0; delivery.waiting != 0; ++round) {
    const std::int64_t now = monotonic_now_ns();
    for (std::uint64_t bits = delivery.waiting; bits != 0; bits &= bits - 1) {
      const auto bit = static_cast<std::uint32_t>(__builtin_ctzll(bits));
      const std::uint64_t mask = std::uint64_t{1} << bit;
      Connection& conn = connection(bit);
      if (conn.ring.try_push(delivery.entry)) {
        delivery.waiting &= ~mask;
        delivered(conn, mask, delivery, status);
      } else if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
        delivery.waiting &= ~mask;
        delivery.not_delivered |= mask;
      } else if (conn.quarantine_after_ns > 0 && now - conn.full_since_ns >= conn.quarantine_after_ns) {
        delivery.waiting &= ~mask;
        quarantine(conn);
        evict_and_push(conn, mask, delivery, status);
      } else if (now - started >= conn.block_timeout_ns) {
        delivery.waiting &= ~mask;
        delivery.not_delivered |= mask;
        bump(conn.dropped_timeout);
        ++status.dropped;
        ++status.timed_out;
      }
    }
    if (delivery.waiting == 0) {
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

void ShmPublisherPort::wake(std::uint64_t delivered_bits) noexcept {
  if (delivered_bits == 0) {
    return;
  }
  // Orders our ring pushes before the waiter counts we read (see
  // futex::notify_if_waiting()).
  futex::full_fence();
  for (std::uint64_t bits = delivered_bits; bits != 0; bits &= bits - 1) {
    const Connection& conn = connection(static_cast<std::uint32_t>(__builtin_ctzll(bits)));
    // The slot was written by the subscriber's process; a corrupt one (the
    // liveness round closes its connection) wakes nobody.
    if (conn.subscriber_slot < kMaxSubscribers) [[likely]] {
      futex::notify_if_waiting(transport_->registry_.subscriber_wake(conn.subscriber_slot));
    }
  }
}

void ShmPublisherPort::count(const PublishStatus& status) noexcept {
  bump(published_);
  add(totals_.delivered, status.delivered);
  add(totals_.dropped_full, status.dropped - status.timed_out);
  add(totals_.dropped_oldest, status.evicted);
  add(totals_.dropped_timeout, status.timed_out);
}

std::uint64_t ShmPublisherPort::subscriber_id(const Connection& conn) noexcept {
  return (std::uint64_t{conn.subscriber_slot} << 32) | conn.subscriber_generation;
}

QueueCounters ShmPublisherPort::queue_counters(const Connection& conn) noexcept {
  // Relaxed: statistics; see Connection.
  return QueueCounters{.queued = conn.delivered.load(std::memory_order_relaxed),
                       .dropped_full = conn.dropped_full.load(std::memory_order_relaxed),
                       .dropped_oldest = conn.dropped_oldest.load(std::memory_order_relaxed),
                       .dropped_timeout = conn.dropped_timeout.load(std::memory_order_relaxed),
                       .quarantined = conn.quarantines.load(std::memory_order_relaxed),
                       .high_water = conn.high_water.load(std::memory_order_relaxed)};
}

std::size_t ShmPublisherPort::subscriber_fill(std::span<SubscriberFill> out) const noexcept {
  std::size_t written = 0;
  // Acquire: see create_connection().
  const std::uint64_t active = block_->active_bits.load(std::memory_order_acquire) & kConnectionBits;
  for (std::uint64_t bits = active; bits != 0 && written < out.size(); bits &= bits - 1) {
    const Connection& conn = connection(static_cast<std::uint32_t>(__builtin_ctzll(bits)));
    if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
      continue;
    }
    out[written++] = SubscriberFill{.subscriber_id = subscriber_id(conn),
                                    .queued = static_cast<std::uint32_t>(conn.ring.size_for_producer()),
                                    .depth = conn.ring.limit(),
                                    .quarantined = conn.quarantined.load(std::memory_order_relaxed) != 0,
                                    .counters = queue_counters(conn)};
  }
  return written;
}

PublisherCounters ShmPublisherPort::counters() const noexcept {
  PublisherCounters result;
  // Relaxed: statistics with a single writer.
  result.published = published_.load(std::memory_order_relaxed);
  result.totals.queued = totals_.delivered.load(std::memory_order_relaxed);
  result.totals.dropped_full = totals_.dropped_full.load(std::memory_order_relaxed);
  result.totals.dropped_oldest = totals_.dropped_oldest.load(std::memory_order_relaxed);
  result.totals.dropped_timeout = totals_.dropped_timeout.load(std::memory_order_relaxed);
  // Relaxed: statistics (ours, and the service thread's for this block).
  result.rejected_by_subscribers =
      totals_.rejected_reclaimed.load(std::memory_order_relaxed) +
      transport_->block_busy_[block_index_].rejected_reclaimed.load(std::memory_order_relaxed);
  const std::uint64_t active = block_->active_bits.load(std::memory_order_acquire) & kConnectionBits;
  for (std::uint64_t bits = active; bits != 0; bits &= bits - 1) {
    const Connection& conn = connection(static_cast<std::uint32_t>(__builtin_ctzll(bits)));
    result.totals.quarantined += conn.quarantines.load(std::memory_order_relaxed);
    // Relaxed: a statistic with one writer, the subscriber (see Connection).
    result.rejected_by_subscribers += conn.rejected.load(std::memory_order_relaxed);
    result.totals.high_water = std::max(result.totals.high_water, conn.high_water.load(std::memory_order_relaxed));
  }
  result.subscribers_unconnected = unconnected_subscribers();
  return result;
}

void ShmPublisherPort::announce_room() noexcept {
  // A subscriber that could not connect for lack of room retries when it
  // next looks; tell the topic's subscribers now, so that one sleeping in an
  // executor does not wait for its next wake-up. Never block the publisher
  // for it: when the lock is busy, the subscriber's own retry does it.
  if (transport_->lock_.try_lock()) {
    transport_->registry_.connections_changed(topic_);
    transport_->lock_.unlock();
  }
}

std::uint32_t ShmPublisherPort::unconnected_subscribers() const noexcept {
  // Never wait for the domain lock here: its holder may be a stopped process,
  // and counters() must not hang on it. A busy lock gives the last count.
  if (!transport_->lock_.try_lock()) {
    return last_unconnected_.load(std::memory_order_relaxed);  // a statistic
  }
  struct Unlock {
    DomainLock& lock;
    ~Unlock() { lock.unlock(); }
  } unlock{transport_->lock_};
  const Registry& registry = transport_->registry_;
  // Acquire pairs with the creator's release in create_connection().
  const std::uint64_t allocated = block_->allocated_bits.load(std::memory_order_acquire);
  std::uint32_t unconnected = 0;
  for (std::uint32_t s = 0; s < kMaxSubscribers; ++s) {
    const EndpointEntry& sub = registry.subscriber(s);
    if (sub.state != EntryState::kActive || sub.topic != topic_) {
      continue;
    }
    bool connected = false;
    for (std::uint64_t bits = allocated; bits != 0 && !connected; bits &= bits - 1) {
      const std::uint16_t index =
          block_->connection_of_bit[__builtin_ctzll(bits)].load(std::memory_order_relaxed);  // see connection()
      if (index >= kMaxConnectionsPerNode) {
        continue;
      }
      const Connection& conn = pool_->segment->connections[index];
      // Acquire pairs with the release store of kActive in create_connection().
      connected = conn.state.load(std::memory_order_acquire) == ConnectionState::kActive && conn.subscriber_slot == s &&
                  conn.subscriber_generation == sub.generation;
    }
    unconnected += connected ? 0 : 1;
  }
  last_unconnected_.store(unconnected, std::memory_order_relaxed);  // a statistic
  return unconnected;
}

void ShmPublisherPort::on_backpressure(std::function<void(const BackpressureEvent&)> handler) {
  backpressure_ = std::move(handler);
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

void ShmPublisherPort::adopt_joiners() noexcept {
  // Acquire pairs with the creator's release fetch_or in create_connection():
  // the connection's fields are visible.
  const std::uint64_t joining = block_->joining_bits.load(std::memory_order_acquire) & kConnectionBits;
  std::uint64_t adopted = 0;
  for (std::uint64_t bits = joining; bits != 0; bits &= bits - 1) {
    const auto bit = static_cast<std::uint32_t>(__builtin_ctzll(bits));
    const std::uint64_t mask = std::uint64_t{1} << bit;
    Connection& conn = connection(bit);
    // Relaxed: only this thread moves bits from joining to active.
    block_->joining_bits.fetch_and(~mask, std::memory_order_relaxed);
    if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
      continue;  // left before adoption; reclaimed as kClosing
    }
    // The newest messages that fit the subscriber's queue, oldest first. The
    // history's bit keeps each chunk alive while we add the connection's.
    const std::uint32_t count = std::min(history_count_, conn.ring.limit());
    for (std::uint32_t i = history_count_ - count; i < history_count_; ++i) {
      const Kept& kept = history_[(history_head_ + i) % kMaxDurabilityDepth];
      // Relaxed: published to the subscriber by the ring's release.
      kept.chunk->holders.fetch_or(mask, std::memory_order_relaxed);
      if (conn.ring.try_push(kept.entry)) {
        bump(conn.delivered);
      } else {
        pool_->pool.drop_holders(kept.chunk, mask);
      }
    }
    // Release: the connection is complete before we push to it as usual.
    block_->active_bits.fetch_or(mask, std::memory_order_release);
    adopted |= mask;
  }
  wake(adopted);
}

void ShmPublisherPort::adopt_joiners_if_idle() noexcept {
  // Relaxed: a stale zero only delays the adoption to the next round.
  if (history_depth_ == 0 || block_->joining_bits.load(std::memory_order_relaxed) == 0) {
    return;
  }
  // try_lock() acquires, pairing with publish()'s unlock() (release): its
  // history is ours to read.
  if (!busy_.try_lock()) {
    return;  // publish() is running and adopts them itself
  }
  adopt_joiners();
  busy_.unlock();  // release: pairs with the acquire of publish()'s lock()
}

void ShmPublisherPort::reclaim_closing() noexcept {
  // The service thread may be reclaiming or handing the history to one of
  // these connections: reclaim only while it cannot.
  busy_.lock();  // acquire: pairs with the service thread's unlock() (release)
  add(totals_.rejected_reclaimed, reclaim_closing_connections(*pool_, block_index_));
  busy_.unlock();  // release: pairs with the acquire of the service thread's try_lock()
}

std::uint32_t ShmPublisherPort::subscriber_count() const noexcept {
  // Acquire: see create_connection().
  return static_cast<std::uint32_t>(__builtin_popcountll(block_->active_bits.load(std::memory_order_acquire)));
}

}  // namespace axon::shm
