#include <fmt/format.h>

#include <algorithm>

#include "src/base/clock.hpp"
#include "src/base/log.hpp"
#include "transports/shm/connections.hpp"
#include "transports/shm/shared_checks.hpp"
#include "transports/shm/shm_ports.hpp"

namespace axon::shm {
namespace {

constexpr std::int64_t kRetryDelayNs = 100'000'000;  ///< After the domain lock could not be taken.

/// Whether `pub` is a live publisher entry of `registry` (reached with the
/// domain lock held). The slot comes from another process: checked first.
bool publisher_registered(const DomainLockGuard& held, const Registry& registry, SlotRef pub) noexcept {
  if (pub.slot >= registry.limits().publishers) {
    return false;
  }
  const EndpointEntry& entry = registry.publisher(held, pub.slot);
  return entry.state == EntryState::kActive && entry.generation == pub.generation;
}

/// The depth of the queue `qos` gets (subscribe() refused a QoS without one).
std::uint32_t queue_depth(const SubscriberQos& qos) {
  const auto queue = effective_queue(qos);
  return queue ? queue->depth : qos.depth;
}

}  // namespace

ShmSubscriberPort::ShmSubscriberPort(NodeParts node, SlotRef registry_ref, std::uint32_t topic, std::string topic_name,
                                     const SubscriberQos& qos, std::uint32_t stats_slot)
    : owner_(std::move(node.owner)),
      domain_(node.domain),
      peers_(node.peers),
      registry_ref_(registry_ref),
      topic_(topic),
      topic_name_(std::move(topic_name)),
      qos_(qos),
      max_links_(domain_.limits().publishers_per_topic),
      links_(std::make_unique<Link[]>(max_links_)),
      stats_(node.stats),
      stats_slot_(stats_slot),
      entry_(node.stats.open_subscriber(stats_slot, stats_identity(registry_ref.slot, registry_ref.generation, topic,
                                                                   topic_name_, queue_depth(qos)))),
      latency_(&entry_.latency) {
  stats_.add_source(this);
}

ShmSubscriberPort::~ShmSubscriberPort() {
  stats_.remove_source(this);  // first: the service thread refreshes no more
  stats_.close_subscriber(stats_slot_);
  // Samples keep the port alive, so nothing is held any more: close every
  // link (the publishers reclaim what is still queued) and leave.
  for (std::uint32_t i = 0; i < link_count_; ++i) {
    if (links_[i].conn != nullptr) {
      close_link(links_[i]);
    }
  }
  domain_.lock().with_lock([&](const DomainLockGuard& held) {
    Registry& registry = domain_.registry(held);
    if (registry.subscriber_is(held, registry_ref_)) {
      registry.remove_subscriber(held, registry_ref_.slot);
    }
  });
}

TakeResult<ReceivedChunk> ShmSubscriberPort::take() noexcept {
  rescan_if_publishers_changed();
  // Relaxed for our own counter; acquire pairs with the release in release().
  const std::uint64_t taken = taken_.load(std::memory_order_relaxed);
  if (taken - released_.load(std::memory_order_acquire) >= qos_.max_held_samples) {
    return Error(ErrorCode::kTooManySamples, "the subscriber holds max_held_samples samples; drop some first");
  }
  const std::uint32_t count = link_count_;
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::uint32_t i = (next_link_ + k) % count;
    Link& link = links_[i];
    if (link.conn == nullptr) {
      continue;
    }
    RingEntry entry;
    if (!(link.evictable ? link.conn->ring.try_pop_contended(link.slots, entry)
                         : link.conn->ring.try_pop(link.slots, entry))) {
      if (link.orphaned) {
        close_drained_orphans();
      }
      continue;
    }
    ChunkPool& chunks = link.pool->pool;
    // The entry comes from another process: check it before using it.
    ChunkHeader* chunk = chunks.chunk_by_index(entry.chunk_index);
    const std::uint32_t capacity = chunks.capacity_of(entry.chunk_index);
    if (chunk == nullptr || entry.payload_offset > capacity || entry.payload_bytes > capacity - entry.payload_offset) {
      logger().error("topic '{}': a publisher queued an invalid entry (chunk {}, {} bytes at {}); dropped", topic_name_,
                     entry.chunk_index, entry.payload_bytes, entry.payload_offset);
      if (chunk != nullptr) {
        chunks.drop_holder(chunk, link.bit);
      }
      continue;
    }
    next_link_ = i + 1;
    ++link.taken;
    taken_.store(taken + 1, std::memory_order_relaxed);
    // Relaxed: a copy for readers of the statistics (single writer); ours
    // stays the one take() trusts, since other processes can write the file.
    entry_.live.taken.store(taken + 1, std::memory_order_relaxed);
    // One take per kLatencyMeasureGapNs of the publisher's stamps pays for
    // the clock and the histogram; the rest pay one compare.
    if (entry.publish_time_ns >= link.measure_from_ns) {
      link.measure_from_ns = entry.publish_time_ns + kLatencyMeasureGapNs;
      latency_.record(clock_.now_ns(), entry.publish_time_ns);
    }
    ReceivedChunk received;
    received.payload = chunks.payload(chunk) + entry.payload_offset;
    received.info = SampleInfo{.sequence = entry.sequence,
                               .publish_time_ns = entry.publish_time_ns,
                               .publisher_id = link.publisher_id,
                               .payload_bytes = entry.payload_bytes};
    received.handle = chunk;
    received.source = i;
    received.same_process = link.pool->owner_is_local;
    return received;
  }
  return kNothingQueued;  // an outcome: no Error constructed
}

void ShmSubscriberPort::release(const ReceivedChunk& received) noexcept {
  Link& link = links_[received.source];
  link.pool->pool.drop_holder(static_cast<ChunkHeader*>(received.handle), link.bit);
  // Release pairs with the acquire loads in take() and Link::held(): our use
  // of the chunk and the pool ends before the link may be closed or reused.
  link.released.fetch_add(1, std::memory_order_release);
  released_.fetch_add(1, std::memory_order_release);
}

void ShmSubscriberPort::reject(const ReceivedChunk& received, std::string_view reason) noexcept {
  const std::uint64_t rejected = rejected_.load(std::memory_order_relaxed) + 1;
  rejected_.store(rejected, std::memory_order_relaxed);
  entry_.live.rejected.store(rejected, std::memory_order_relaxed);  // the readers' copy
  // counters().taken counts what reached user code only.
  rejected_taken_.store(rejected_taken_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  // Tell the publisher (its counters().rejected_by_subscribers): the message
  // reached no one here. Relaxed, single writer: only the taking thread
  // rejects, and the link of a taken sample is open (it holds the sample).
  if (Connection* conn = links_[received.source].conn; conn != nullptr) {
    conn->rejected.store(conn->rejected.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  if (rejected <= 10 || rejected % 1000 == 0) {
    logger().warn("topic '{}': dropped message {} of publisher {:#x} ({} bytes): {} ({} rejected so far)", topic_name_,
                  received.info.sequence, received.info.publisher_id, received.info.payload_bytes, reason, rejected);
  }
  release(received);
}

SubscriberCounters ShmSubscriberPort::counters() const noexcept {
  SubscriberCounters result{
      .taken = taken_.load(std::memory_order_relaxed) - rejected_taken_.load(std::memory_order_relaxed),
      .rejected = rejected_.load(std::memory_order_relaxed),
      .publishers_lost = publishers_lost_.load(std::memory_order_relaxed),
      .queue = {},
      .publishers_unconnected = publishers_unconnected_.load(std::memory_order_relaxed)};  // a statistic
  // The taking thread changes links; counters() may run on another thread,
  // so it reads the sums kept for closed links and live connections under
  // the links mutex (not on the data path: take() never locks it).
  std::lock_guard<std::mutex> guard(links_mutex_);
  result.queue = closed_links_;
  for (std::uint32_t i = 0; i < link_count_; ++i) {
    if (links_[i].conn != nullptr) {
      accumulate(result.queue, *links_[i].conn);
    }
  }
  return result;
}

void ShmSubscriberPort::accumulate(QueueCounters& sum, const Connection& conn) noexcept {
  // Relaxed: statistics written by the publisher alone.
  sum.queued += conn.delivered.load(std::memory_order_relaxed);
  sum.dropped_full += conn.dropped_full.load(std::memory_order_relaxed);
  sum.dropped_oldest += conn.dropped_oldest.load(std::memory_order_relaxed);
  sum.dropped_timeout += conn.dropped_timeout.load(std::memory_order_relaxed);
  sum.quarantined += conn.quarantines.load(std::memory_order_relaxed);
  sum.high_water = std::max(sum.high_water, conn.high_water.load(std::memory_order_relaxed));
}

void ShmSubscriberPort::refresh_stats() noexcept {
  QueueCounters queue;
  std::uint64_t fill = 0;
  std::uint32_t publishers = 0;
  {
    // The links mutex: the taking thread (dis)connects links under it.
    std::lock_guard<std::mutex> guard(links_mutex_);
    queue = closed_links_;
    for (std::uint32_t i = 0; i < link_count_; ++i) {
      if (links_[i].conn != nullptr) {
        accumulate(queue, *links_[i].conn);
        fill += links_[i].conn->ring.size_for_consumer(links_[i].slots);
        publishers += links_[i].orphaned ? 0 : 1;
      }
    }
  }
  // Relaxed stores: this thread is the only writer of the refreshed part;
  // readers take each value on its own.
  SubscriberStats::Refreshed& out = entry_.refreshed;
  out.queued.store(queue.queued, std::memory_order_relaxed);
  out.dropped_full.store(queue.dropped_full, std::memory_order_relaxed);
  out.dropped_oldest.store(queue.dropped_oldest, std::memory_order_relaxed);
  out.dropped_timeout.store(queue.dropped_timeout, std::memory_order_relaxed);
  out.quarantined.store(queue.quarantined, std::memory_order_relaxed);
  out.high_water.store(queue.high_water, std::memory_order_relaxed);
  out.fill.store(static_cast<std::uint32_t>(std::min<std::uint64_t>(fill, UINT32_MAX)), std::memory_order_relaxed);
  out.publishers.store(publishers, std::memory_order_relaxed);
  out.at_ns.store(monotonic_now_ns(), std::memory_order_relaxed);
}

bool ShmSubscriberPort::has_data() noexcept {
  rescan_if_publishers_changed();
  for (std::uint32_t i = 0; i < link_count_; ++i) {
    if (links_[i].conn != nullptr && links_[i].conn->ring.has_entry(links_[i].slots)) {
      return true;
    }
  }
  return false;
}

WakeWord* ShmSubscriberPort::wake_word() noexcept { return &domain_.subscriber_wake(registry_ref_.slot); }

std::uint32_t ShmSubscriberPort::publisher_count() noexcept {
  rescan_if_publishers_changed();
  std::uint32_t count = 0;
  for (std::uint32_t i = 0; i < link_count_; ++i) {
    count += links_[i].conn != nullptr && !links_[i].orphaned ? 1 : 0;
  }
  return count;
}

void ShmSubscriberPort::rescan_if_publishers_changed() noexcept {
  if (domain_.topic_version(topic_) != seen_version_ || peers_.pools_mapped() != seen_pools_mapped_ ||
      (retry_at_ns_ != 0 && monotonic_now_ns() >= retry_at_ns_)) {
    rescan();
  }
}

void ShmSubscriberPort::rescan() noexcept {
  if (!domain_.lock().with_lock([&](const DomainLockGuard& held) { rescan(held); })) {
    retry_at_ns_ = monotonic_now_ns() + kRetryDelayNs;
  }
}

void ShmSubscriberPort::rescan(const DomainLockGuard& held) noexcept {
  const Registry& registry = domain_.registry(held);
  seen_version_ = registry.topic_version(topic_);
  // Before looking for pools: one mapped after this load triggers another rescan.
  seen_pools_mapped_ = peers_.pools_mapped();
  retry_at_ns_ = 0;
  missing_pools_ = false;
  // A damaged registry looks empty: keep the links we have (their data still
  // flows) instead of orphaning them. Logged by the check.
  if (!domain_.registry_intact(held)) {
    return;
  }
  for (std::uint32_t i = 0; i < link_count_; ++i) {
    links_[i].seen = false;
  }
  std::uint32_t unconnected = 0;
  for (std::uint32_t p = 0; p < registry.limits().publishers; ++p) {
    const EndpointEntry& pub = registry.publisher(held, p);
    if (pub.state == EntryState::kActive && pub.topic == topic_ && !link_publisher(held, p, pub)) {
      ++unconnected;
    }
  }
  adopt_retained(held, registry);
  if (!domain_.registry_intact(held)) {
    return;  // damaged while we read it: what we did not see may still be there
  }
  publishers_unconnected_.store(unconnected, std::memory_order_relaxed);  // a statistic
  for (std::uint32_t i = 0; i < link_count_; ++i) {
    if (links_[i].conn != nullptr && !links_[i].seen && !links_[i].orphaned) {
      set_orphaned(links_[i], true);  // deliver what it queued, then close
      // Relaxed: a statistic read by the executor's liveliness check; this
      // thread (holding the domain lock) is its only writer.
      const std::uint64_t lost = publishers_lost_.load(std::memory_order_relaxed) + 1;
      publishers_lost_.store(lost, std::memory_order_relaxed);
      entry_.live.publishers_lost.store(lost, std::memory_order_relaxed);  // the readers' copy
    }
  }
}

bool ShmSubscriberPort::link_publisher(const DomainLockGuard& held, std::uint32_t p,
                                       const EndpointEntry& pub) noexcept {
  // Written by another process: its indices are checked before any use.
  if (const std::string_view why = invalid_publisher_entry(pub, domain_.limits()); !why.empty()) {
    report_corruption(Corruption::kPublisherEntry,
                      fmt::format("topic '{}': registry publisher entry {} is corrupt ({}: participant {}, "
                                  "pool_block {})",
                                  topic_name_, p, why, pub.participant, pub.pool_block));
    return true;
  }
  const SlotRef pub_ref{p, pub.generation};
  std::uint32_t existing = kNoLink;
  for (std::uint32_t i = 0; i < link_count_; ++i) {
    if (links_[i].conn != nullptr && links_[i].publisher == pub_ref) {
      existing = i;
    }
  }
  if (existing != kNoLink) {
    links_[existing].seen = true;
    set_orphaned(links_[existing], false);  // registered: it drains only once it leaves
    return true;
  }
  // Never fetched here: we hold the domain lock, and the owner may be
  // stopped. The service thread fetches it; pools_mapped() then moves.
  auto pool = peers_.mapped_pool({pub.participant, pub.participant_generation}, true);
  if (pool == nullptr) {
    missing_pools_ = true;
    return false;
  }
  // The registry entry was checked against the largest pool; now against
  // the one the owner made (its stored block count, checked when mapped).
  if (const std::string_view why = invalid_block_index(pub.pool_block, pool->block_count()); !why.empty()) {
    report_corruption(Corruption::kPublisherEntry,
                      fmt::format("topic '{}': registry publisher entry {} is corrupt ({}: pool_block {} of {})",
                                  topic_name_, p, why, pub.pool_block, pool->block_count()));
    return true;
  }
  PublisherBlock& block = pool->block(pub.pool_block);
  if (block.state.load(std::memory_order_acquire) != BlockState::kActive || block.publisher_slot != pub_ref.slot ||
      block.publisher_generation != pub_ref.generation) {
    return true;  // the publisher is going away
  }
  // The publisher may have connected us already (it connects existing
  // subscribers when it advertises); otherwise connect now.
  Connection* conn = nullptr;
  for (std::uint32_t c = 0; c < pool->connection_count(); ++c) {
    Connection& candidate = pool->connection(c);
    if (candidate.state.load(std::memory_order_acquire) == ConnectionState::kActive &&
        candidate.block == pub.pool_block && candidate.subscriber_slot == registry_ref_.slot &&
        candidate.subscriber_generation == registry_ref_.generation) {
      conn = &candidate;
      break;
    }
  }
  if (conn == nullptr) {
    auto created = create_connection(held, domain_.registry(held), domain_.config().domain_id, *pool, pub.pool_block,
                                     registry_ref_, true);
    if (!created) {
      // No room in the publisher's pool yet (a closed connection waits to
      // be reclaimed): retry, not only when the publishers change.
      if (publishers_unconnected_.load(std::memory_order_relaxed) == 0) {  // once, not every retry
        logger().warn("topic '{}': {}; retrying", topic_name_, created.error().message());
      }
      retry_at_ns_ = monotonic_now_ns() + kRetryDelayNs;
      return false;
    }
    conn = *created;
  }
  if (const std::string_view why = invalid_connection(*conn, domain_.limits(), pool->block_count()); !why.empty()) {
    report_corruption(Corruption::kConnection,
                      fmt::format("topic '{}': a connection in participant {}'s pool is corrupt ({}: block {}, bit {})",
                                  topic_name_, pub.participant, why, conn->block, conn->bit));
    return true;
  }
  const std::uint32_t slot = link(std::move(pool), conn, pub_ref, false);
  if (slot == kNoLink) {
    return false;
  }
  links_[slot].seen = true;
  return true;
}

void ShmSubscriberPort::adopt_retained(const DomainLockGuard& held, const Registry& registry) noexcept {
  // Connections to us in pools the node kept for us (a publisher that
  // connected us, queued messages, and is gone now, or going): read what
  // they queued, then close them.
  for (auto& pool : peers_.retained_pools()) {
    for (std::uint32_t c = 0; c < pool->connection_count(); ++c) {
      Connection& candidate = pool->connection(c);
      // Acquire pairs with the creator's release store of kActive.
      if (candidate.state.load(std::memory_order_acquire) != ConnectionState::kActive ||
          candidate.subscriber_slot != registry_ref_.slot ||
          candidate.subscriber_generation != registry_ref_.generation) {
        continue;
      }
      bool linked = false;
      for (std::uint32_t i = 0; i < link_count_; ++i) {
        linked = linked || links_[i].conn == &candidate;
      }
      if (linked) {
        continue;
      }
      // Written by another process: checked before block and bit are used.
      if (const std::string_view why = invalid_connection(candidate, domain_.limits(), pool->block_count());
          !why.empty()) {
        report_corruption(Corruption::kConnection,
                          fmt::format("topic '{}': a connection in participant {}'s pool is corrupt ({}: block {}, "
                                      "bit {})",
                                      topic_name_, pool->owner.slot, why, candidate.block, candidate.bit));
        continue;
      }
      const PublisherBlock& block = pool->block(candidate.block);
      const SlotRef pub_ref{block.publisher_slot, block.publisher_generation};
      // A publisher still registered is not gone: its link must not close
      // when its ring runs empty (it would drop what the publisher queues
      // next). Only a departed publisher's link drains and closes.
      const bool departed = !publisher_registered(held, registry, pub_ref);
      if (const std::uint32_t slot = link(pool, &candidate, pub_ref, departed); slot != kNoLink) {
        links_[slot].seen = true;
      }
    }
  }
}

std::uint32_t ShmSubscriberPort::link(std::shared_ptr<MappedPool> pool, Connection* conn, SlotRef pub_ref,
                                      bool orphaned) noexcept {
  std::uint32_t slot = kNoLink;
  for (std::uint32_t i = 0; i < max_links_; ++i) {
    // Acquire: a free link's last sample was released (see release()).
    if (links_[i].conn == nullptr && links_[i].held() == 0) {
      slot = i;
      break;
    }
  }
  if (slot == kNoLink) {
    logger().warn("topic '{}': a subscriber reads from at most {} publishers (limits.publishers_per_topic)",
                  topic_name_, max_links_);
    conn->state.store(ConnectionState::kClosing, std::memory_order_release);
    return kNoLink;
  }
  Link& link = links_[slot];
  std::lock_guard<std::mutex> links_guard(links_mutex_);
  link.slots = pool->queue_slots;
  link.pool = std::move(pool);
  link.conn = conn;
  link.evictable = conn->evictable();
  // Checked by invalid_connection() before; clamped again because another
  // process could have changed it since, and it picks a word of the ledger.
  link.bit = holder_bit(std::min(conn->bit, kMaxSubscribersPerPublisher - 1));
  link.publisher = pub_ref;
  link.publisher_id = (std::uint64_t{pub_ref.slot} << 32) | pub_ref.generation;
  link.measure_from_ns = 0;
  link.orphaned = orphaned;
  link_count_ = std::max(link_count_, slot + 1);
  return slot;
}

void ShmSubscriberPort::set_orphaned(Link& link, bool orphaned) noexcept {
  // Read here without the mutex: this (taking) thread is its only writer.
  if (link.orphaned != orphaned) {
    // refresh_stats() counts the live publishers on the service thread.
    const std::lock_guard<std::mutex> guard(links_mutex_);
    link.orphaned = orphaned;
  }
}

void ShmSubscriberPort::close_drained_orphans() noexcept {
  for (std::uint32_t i = 0; i < link_count_; ++i) {
    Link& link = links_[i];
    // Acquire pairs with the release decrement in release().
    if (link.conn != nullptr && link.orphaned && !link.conn->ring.has_entry(link.slots) && link.held() == 0) {
      close_link(link);
    }
  }
}

void ShmSubscriberPort::close_link(Link& link) noexcept {
  std::lock_guard<std::mutex> guard(links_mutex_);
  accumulate(closed_links_, *link.conn);
  auto expected = ConnectionState::kActive;
  // Release pairs with the acquire in publish()/the service thread: we are
  // done with the ring; the owner reclaims what it still holds.
  link.conn->state.compare_exchange_strong(expected, ConnectionState::kClosing, std::memory_order_release,
                                           std::memory_order_relaxed);
  link.conn = nullptr;
  link.pool.reset();  // unmaps a dead publisher's pool once nobody else needs it
}

}  // namespace axon::shm
