// ShmPublisherPort: what it reports (counters, subscriber fill, who holds
// the chunks when the pool is exhausted). Never on the data path.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "src/base/clock.hpp"
#include "transports/shm/shared_checks.hpp"
#include "transports/shm/shm_ports.hpp"

namespace axon::shm {

std::string ShmPublisherPort::explain_exhausted() const {
  if (last_exhausted_.payload_bytes == 0) {
    return fmt::format("topic '{}': no loan found the pool exhausted yet", topic_name_);
  }
  if (last_exhausted_.reservation_only) {
    return reservation_exhausted(last_exhausted_.payload_bytes);
  }
  return exhausted(last_exhausted_.payload_bytes, last_exhausted_.were_cached);
}

std::string ShmPublisherPort::reservation_exhausted(std::size_t payload_bytes) const {
  return fmt::format(
      "topic '{}': all {} chunks it reserved ({} B each) are in use ({} loaned or held by subscribers) and "
      "beyond_reservation is refuse, so a {} B loan does not take the node's shared chunks; publish or drop loans "
      "sooner, lower the subscribers' depth or max_held_samples, raise reserved_chunks, or set beyond_reservation "
      "to shared",
      topic_name_, reservation_.count(), reservation_.capacity_bytes(), reservation_.busy(), payload_bytes);
}

std::string ShmPublisherPort::exhausted(std::size_t payload_bytes, std::uint32_t were_cached) const {
  const ChunkPool& chunks = pool_->pool;
  const ChunkPool::ClassRange range = chunks.classes_for(payload_bytes, fallback_);
  constexpr std::uint64_t kSubscriberBits = kNetworkBit - 1;  // bits 0..60
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
      const bool wide = ChunkPool::held_wide(chunk, holders);
      if (holders == 0 && !wide) {
        continue;
      }
      if (chunk->publisher_block.load(std::memory_order_relaxed) != block_index_) {
        ++others;
      } else if ((holders & kSubscriberBits) != 0 || wide) {
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
      "taken), {} are kept for late joiners or resends{}, other publishers of the node hold {} (by topic, "
      "in the {} B class: {}); publish or drop loans sooner, lower the subscribers' depth or max_held_samples, "
      "or add chunks to that class (NodeOptions::chunk_classes, pool.chunk_classes)",
      topic_name_, payload_bytes, total, first.payload_capacity, last.payload_capacity, domain_.config().node_name,
      fallback_.max_classes, fallback_.max_ratio == 0 ? std::string("any") : std::to_string(fallback_.max_ratio),
      loaned, were_cached, subscribers, kept,
      reservation_.count() == 0 ? std::string()
                                : fmt::format(", its own {} reserved chunks of {} B are all in use",
                                              reservation_.count(), reservation_.capacity_bytes()),
      others, first.payload_capacity, own_.holders_text(range.first, block_index_));
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
  load_connections(block_->active_bits, std::memory_order_acquire).for_each([&](std::uint32_t bit) {
    const Connection& conn = connection(bit);
    if (written == out.size() || conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
      return;
    }
    out[written++] = SubscriberFill{.subscriber_id = subscriber_id(conn),
                                    .queued = static_cast<std::uint32_t>(conn.ring.size_for_producer()),
                                    .depth = conn.ring.limit(),
                                    .quarantined = conn.quarantined.load(std::memory_order_relaxed) != 0,
                                    .counters = queue_counters(conn)};
  });
  return written;
}

PublisherCounters ShmPublisherPort::counters() const noexcept {
  PublisherCounters result;
  // Relaxed: statistics with a single writer.
  // (in our statistics entry, written by publish()).
  result.published = entry_.live.published.load(std::memory_order_relaxed);
  result.totals.queued = entry_.live.queued.load(std::memory_order_relaxed);
  result.totals.dropped_full = entry_.live.dropped_full.load(std::memory_order_relaxed);
  result.totals.dropped_oldest = entry_.live.dropped_oldest.load(std::memory_order_relaxed);
  result.totals.dropped_timeout = entry_.live.dropped_timeout.load(std::memory_order_relaxed);
  // Relaxed: statistics (ours, and the service thread's for this block).
  result.rejected_by_subscribers = totals_.rejected_reclaimed.load(std::memory_order_relaxed) +
                                   busy_.rejected_reclaimed.load(std::memory_order_relaxed);
  load_connections(block_->active_bits, std::memory_order_acquire).for_each([&](std::uint32_t bit) {
    const Connection& conn = connection(bit);
    result.totals.quarantined += conn.quarantines.load(std::memory_order_relaxed);
    // Relaxed: a statistic with one writer, the subscriber (see Connection).
    result.rejected_by_subscribers += conn.rejected.load(std::memory_order_relaxed);
    result.totals.high_water = std::max(result.totals.high_water, conn.high_water.load(std::memory_order_relaxed));
  });
  result.subscribers_unconnected = unconnected_subscribers();
  return result;
}

std::uint32_t ShmPublisherPort::unconnected_subscribers() const noexcept {
  // Never wait for the domain lock here: its holder may be a stopped process,
  // and counters() must not hang on it. A busy lock gives the last count.
  const auto held = domain_.lock().try_lock();
  if (!held) {
    return last_unconnected_.load(std::memory_order_relaxed);  // a statistic
  }
  const Registry& registry = domain_.registry(*held);
  // Acquire pairs with the creator's release in create_connection().
  const ConnectionSet allocated = load_connections(block_->allocated_bits, std::memory_order_acquire);
  std::uint32_t unconnected = 0;
  for (std::uint32_t s = 0; s < registry.limits().subscribers; ++s) {
    const EndpointEntry& sub = registry.subscriber(*held, s);
    if (sub.state != EntryState::kActive || sub.topic != topic_) {
      continue;
    }
    bool connected = false;
    allocated.for_each([&](std::uint32_t bit) {
      const std::uint16_t index = block_->connection_of_bit[bit].load(std::memory_order_relaxed);  // see connection()
      if (connected || index >= pool_->connection_count()) {
        return;
      }
      const Connection& conn = pool_->connection(index);
      // Acquire pairs with the release store of kActive in create_connection().
      connected = conn.state.load(std::memory_order_acquire) == ConnectionState::kActive && conn.subscriber_slot == s &&
                  conn.subscriber_generation == sub.generation;
    });
    unconnected += connected ? 0 : 1;
  }
  last_unconnected_.store(unconnected, std::memory_order_relaxed);  // a statistic
  return unconnected;
}

void ShmPublisherPort::refresh_stats() noexcept {
  std::uint64_t quarantined = 0;
  std::uint64_t rejected = totals_.rejected_reclaimed.load(std::memory_order_relaxed) +
                           busy_.rejected_reclaimed.load(std::memory_order_relaxed);  // statistics
  std::uint32_t high_water = 0;
  std::uint32_t subscribers = 0;
  // Acquire: see create_connection().
  load_connections(block_->active_bits, std::memory_order_acquire).for_each([&](std::uint32_t bit) {
    const Connection& conn = connection(bit);
    if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
      return;
    }
    // Relaxed: statistics (see Connection). Not the ring's fill: its write
    // index is the publishing thread's own, plain field.
    quarantined += conn.quarantines.load(std::memory_order_relaxed);
    rejected += conn.rejected.load(std::memory_order_relaxed);
    high_water = std::max(high_water, conn.high_water.load(std::memory_order_relaxed));
    ++subscribers;
  });
  // Relaxed stores: this thread is the only writer of the refreshed part;
  // readers take each value on its own.
  PublisherStats::Refreshed& out = entry_.refreshed;
  out.quarantined.store(quarantined, std::memory_order_relaxed);
  out.rejected_by_subscribers.store(rejected, std::memory_order_relaxed);
  out.high_water.store(high_water, std::memory_order_relaxed);
  out.subscribers.store(subscribers, std::memory_order_relaxed);
  out.at_ns.store(monotonic_now_ns(), std::memory_order_relaxed);
}

void ShmPublisherPort::on_backpressure(std::function<void(const BackpressureEvent&)> handler) {
  backpressure_ = std::move(handler);
}

}  // namespace axon::shm
