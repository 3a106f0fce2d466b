#include "transports/shm/connections.hpp"

#include <fmt/format.h>

#include <bit>

#include "transports/shm/shared_checks.hpp"

namespace axon::shm {
namespace {

/// The registry stores the subscriber's effective axon::Overflow (see
/// effective_queue(): kLatestOnly is kDropOldest of depth 1 by then).
OverflowPolicy policy_of(Overflow overflow) noexcept {
  switch (overflow) {
    case Overflow::kBlockPublisher: return OverflowPolicy::kBlockPublisher;
    case Overflow::kRejectNewest: return OverflowPolicy::kRejectNewest;
    default: return OverflowPolicy::kDropOldest;
  }
}

/// Where a ring of `capacity` slots fits among the queue slots of `pool`:
/// the first range aligned to its capacity that no other connection's ring
/// overlaps (connections not kFree; their ranges, written by their creators,
/// count only where they fit in the area). Called under the domain lock, as
/// every creator is, so no range is taken meanwhile; a reclaimer that frees
/// a connection concurrently only makes room. Slow path, no allocation: a
/// pass that moves the candidate moves it past a ring, so there are at most
/// connections + 1 passes. Returns queue_slots.count when nothing fits.
std::uint64_t find_queue_range(const MappedPool& pool, const Connection& self, std::uint64_t capacity) noexcept {
  const std::uint64_t area = pool.queue_slots.count;
  std::uint64_t start = 0;
  bool moved = true;
  while (moved && start + capacity <= area) {
    moved = false;
    for (std::uint32_t i = 0; i < pool.connection_count(); ++i) {
      const Connection& other = pool.connection(i);
      // Acquire pairs with the reclaimer's release store of kFree: a ring we
      // see as free is no longer used.
      if (&other == &self || other.state.load(std::memory_order_acquire) == ConnectionState::kFree) {
        continue;
      }
      const std::uint64_t first = other.ring.first_slot();
      const std::uint64_t end = first + other.ring.capacity();
      if (end > area || end <= start || first >= start + capacity) {
        continue;  // out of the area (corrupt: never used), or no overlap
      }
      start = (end + capacity - 1) / capacity * capacity;
      moved = true;
    }
  }
  return start + capacity <= area ? start : area;
}

}  // namespace

Result<Connection*> create_connection(const DomainLockGuard& held, const Registry& registry, std::uint32_t domain_id,
                                      MappedPool& pool, std::uint32_t block_index, SlotRef subscriber,
                                      bool hand_over_history) {
  PublisherBlock& block = pool.block(block_index);
  // Acquire pairs with the reclaimer's release clear: a bit we see free is
  // no longer used. Bits are only set under the domain lock, which we hold.
  const ConnectionSet allocated = load_connections(block.allocated_bits, std::memory_order_acquire);
  std::uint32_t bit = kMaxSubscribersPerPublisher;
  for (std::uint32_t w = 0; w < kHolderWords && bit == kMaxSubscribersPerPublisher; ++w) {
    if (const std::uint64_t free = ~allocated.words[w] & kConnectionBitsOfWord[w]; free != 0) {
      bit = connection_bit(w, static_cast<std::uint32_t>(__builtin_ctzll(free)));
    }
  }
  if (bit == kMaxSubscribersPerPublisher) {
    return Error(ErrorCode::kLimitReached,
                 fmt::format("a publisher has at most {} subscribers: drop a subscriber of its topic or split the "
                             "topic",
                             kMaxSubscribersPerPublisher));
  }
  const HolderBit held_bit = holder_bit(bit);
  for (std::uint32_t i = 0; i < pool.connection_count(); ++i) {
    Connection& conn = pool.connection(i);
    auto expected = ConnectionState::kFree;
    // Acquire pairs with the reclaimer's release store of kFree.
    if (!conn.state.compare_exchange_strong(expected, ConnectionState::kClaimed, std::memory_order_acquire,
                                            std::memory_order_relaxed)) {
      continue;
    }
    const EndpointEntry& sub = registry.subscriber(held, subscriber.slot);
    // Another process wrote the entry; its depth and policy shape our ring.
    if (const std::string_view why = invalid_subscriber_entry(sub, registry.limits()); !why.empty()) {
      conn.state.store(ConnectionState::kFree, std::memory_order_relaxed);  // never published
      return Error(ErrorCode::kIncompatible,
                   fmt::format("registry subscriber entry {} is corrupt ({}: depth {}, overflow {}); not connected. "
                               "Restart the processes of domain {}",
                               subscriber.slot, why, sub.depth, sub.overflow, domain_id));
    }
    // Depth 1..kRingCapacity (checked above): its power of two of the slots.
    const std::uint64_t capacity = std::bit_ceil(sub.depth);
    const std::uint64_t first = find_queue_range(pool, conn, capacity);
    if (first == pool.queue_slots.count) {
      conn.state.store(ConnectionState::kFree, std::memory_order_relaxed);  // never published
      return Error(ErrorCode::kLimitReached,
                   fmt::format("the pool of participant {} has no {} free queue slots left for a subscriber of depth "
                               "{} (its pool.queue_slots is {}, shared by its connections' queues, each its depth "
                               "rounded up to a power of two): raise pool.queue_slots of the publishing node, or "
                               "lower subscriber depths",
                               pool.owner.slot, capacity, sub.depth, pool.queue_slots.count));
    }
    conn.block = block_index;
    conn.bit = bit;
    conn.subscriber_slot = subscriber.slot;
    conn.subscriber_generation = subscriber.generation;
    conn.overflow = policy_of(static_cast<Overflow>(sub.overflow));
    conn.reliable = sub.reliable;
    conn.block_timeout_ns = sub.block_timeout_ns;
    conn.quarantine_after_ns = sub.quarantine_after_ns;
    // Relaxed: published by the state store below.
    conn.delivered.store(0, std::memory_order_relaxed);
    conn.dropped_full.store(0, std::memory_order_relaxed);
    conn.dropped_oldest.store(0, std::memory_order_relaxed);
    conn.dropped_timeout.store(0, std::memory_order_relaxed);
    conn.quarantines.store(0, std::memory_order_relaxed);
    conn.high_water.store(0, std::memory_order_relaxed);
    conn.quarantined.store(0, std::memory_order_relaxed);
    conn.rejected.store(0, std::memory_order_relaxed);
    conn.full_since_ns = 0;
    conn.above_high_water = 0;
    conn.ring.reset(pool.queue_slots, static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(capacity),
                    sub.depth);
    block.connection_of_bit[bit].store(static_cast<std::uint16_t>(i), std::memory_order_relaxed);
    block.allocated_bits[held_bit.word].fetch_or(held_bit.mask, std::memory_order_relaxed);
    // Release pairs with the acquire loads of the state by publisher and subscriber.
    conn.state.store(ConnectionState::kActive, std::memory_order_release);
    // Release pairs with the publisher's acquire load of active_bits (or of
    // joining_bits): the connection and its bit's index are visible first.
    // A transient-local publisher's own process queues its history to the
    // connection first (the ring has one producer), then activates it.
    const bool joining = hand_over_history && block.history_depth > 0;
    (joining ? block.joining_bits : block.active_bits)[held_bit.word].fetch_or(held_bit.mask,
                                                                               std::memory_order_release);
    return &conn;
  }
  return Error(ErrorCode::kLimitReached,
               fmt::format("the pool of participant {} has all its {} connections (publisher x subscriber pairs) in "
                           "use: raise pool.connections of the publishing node",
                           pool.owner.slot, pool.connection_count()));
}

bool has_closing_connection(const MappedPool& pool, const PublisherBlock& block) noexcept {
  // Acquire pairs with the creator's release in create_connection().
  bool closing = false;
  load_connections(block.allocated_bits, std::memory_order_acquire).for_each([&](std::uint32_t bit) {
    const std::uint16_t index = block.connection_of_bit[bit].load(std::memory_order_relaxed);  // written before the bit
    // Acquire pairs with the release that moved the connection to kClosing.
    closing = closing || (index < pool.connection_count() &&
                          pool.connection(index).state.load(std::memory_order_acquire) == ConnectionState::kClosing);
  });
  return closing;
}

std::uint64_t reclaim_connection(MappedPool& pool, std::uint32_t block_index, std::uint32_t bit) noexcept {
  if (bit >= kMaxSubscribersPerPublisher) {
    return 0;  // callers pass bits of masked snapshots; never index past connection_of_bit
  }
  PublisherBlock& block = pool.block(block_index);
  const HolderBit held_bit = holder_bit(bit);
  // Relaxed: the caller is the only thread that pushes to this block.
  block.active_bits[held_bit.word].fetch_and(~held_bit.mask, std::memory_order_relaxed);
  block.joining_bits[held_bit.word].fetch_and(~held_bit.mask, std::memory_order_relaxed);
  // Give back every chunk the connection holds (queued or taken). A chunk of
  // this block that has our bit cannot be freed or loaned again until we
  // clear it, and only the caller loans for this block, so reading the bit
  // first (acquire, pairing with the release fetch_or in publish()) and the
  // block second identifies our chunks without races.
  ChunkPool& chunks = pool.pool;
  for (std::uint32_t i = 0; i < chunks.total_chunks(); ++i) {
    ChunkHeader* chunk = chunks.chunk_by_index(i);
    if ((chunk->holder_word(held_bit.word).load(std::memory_order_acquire) & held_bit.mask) == 0) {
      continue;
    }
    if (chunk->publisher_block.load(std::memory_order_relaxed) != block_index) {
      continue;
    }
    chunks.drop_holder(chunk, held_bit);
  }
  const std::uint16_t index = block.connection_of_bit[bit].load(std::memory_order_relaxed);
  // Relaxed: the subscriber's last store came before its release that moved
  // the connection to kClosing, which our caller acquired. A corrupt index
  // reads nothing.
  const std::uint64_t rejected =
      index < pool.connection_count() ? pool.connection(index).rejected.load(std::memory_order_relaxed) : 0;
  block.connection_of_bit[bit].store(kNoConnection, std::memory_order_relaxed);
  // The index was written by the connection's creator (maybe another
  // process): a corrupt one frees the bit but touches no connection.
  if (index < pool.connection_count()) {
    // Release: creators that see kFree (acquire CAS) see the connection idle.
    pool.connection(index).state.store(ConnectionState::kFree, std::memory_order_release);
  }
  // Release: the bit is reusable only after everything above.
  block.allocated_bits[held_bit.word].fetch_and(~held_bit.mask, std::memory_order_release);
  return rejected;
}

std::uint64_t reclaim_closing_connections(MappedPool& pool, std::uint32_t block_index) noexcept {
  PublisherBlock& block = pool.block(block_index);
  std::uint64_t rejected = 0;
  // Acquire pairs with the creator's release in create_connection(); only the
  // caller clears bits, so the snapshot cannot lose one it must reclaim.
  // Bits above the connections' are never allocated; masked, a stray one
  // cannot index past connection_of_bit.
  load_connections(block.allocated_bits, std::memory_order_acquire).for_each([&](std::uint32_t bit) {
    const std::uint16_t index = block.connection_of_bit[bit].load(std::memory_order_relaxed);
    if (index != kNoConnection && index >= pool.connection_count()) {
      report_corruption(Corruption::kConnectionIndex,
                        fmt::format("publisher block {} maps bit {} to connection {} (at most {}); freeing the bit",
                                    block_index, bit, index, pool.connection_count()));
      reclaim_connection(pool, block_index, bit);
      return;
    }
    // Acquire pairs with the release that moved the connection to kClosing.
    if (index != kNoConnection &&
        pool.connection(index).state.load(std::memory_order_acquire) == ConnectionState::kClosing) {
      rejected += reclaim_connection(pool, block_index, bit);
    }
  });
  return rejected;
}

}  // namespace axon::shm
