// Layout of a participant's pool segment (a memfd): publisher blocks, the
// connections from publishers to subscribers with their rings, then the
// chunk pool. Only the owner loans and publishes; subscribers of any process
// that map the segment pop from their rings and give chunks back.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "transports/shm/holder_bits.hpp"
#include "transports/shm/segment.hpp"
#include "transports/shm/shm_constants.hpp"
#include "transports/shm/spsc_ring.hpp"

namespace axon::shm {

/// Connections a node's pool may be configured with (pool.connections):
/// connection_of_bit holds 16-bit indices, 0xFFFF meaning none.
inline constexpr std::uint32_t kMaxConnectionsPerNode = 16384;
inline constexpr std::uint32_t kDefaultConnectionsPerNode = 256;
/// Queue slots (one cache line each) a node's pool may be configured with
/// (pool.queue_slots), shared by the rings of its connections: a ring takes
/// its subscriber's depth rounded up to a power of two.
inline constexpr std::uint32_t kMaxQueueSlotsPerNode = 1U << 20;
inline constexpr std::uint32_t kDefaultQueueSlotsPerNode = 4096;
inline constexpr std::uint16_t kNoConnection = 0xFFFF;

enum class ConnectionState : std::uint32_t {
  kFree = 0,     ///< Unused.
  kClaimed = 1,  ///< Being filled by its creator (under the domain lock).
  kActive = 2,   ///< The publisher pushes, the subscriber pops.
  kClosing = 3,  ///< The subscriber left or died; waits for its reclaimer.
};

/// What a ring carries: the chunk and what the subscriber needs to know
/// about the message, so taking it touches no other cache line.
struct RingEntry {
  std::uint32_t chunk_index = 0;
  std::uint32_t payload_bytes = 0;
  std::uint32_t payload_offset = 0;
  std::uint32_t reserved = 0;
  std::int64_t publish_time_ns = 0;
  std::uint64_t sequence = 0;
};

enum class OverflowPolicy : std::uint32_t { kRejectNewest = 0, kBlockPublisher = 1, kDropOldest = 2 };

/// One publisher -> subscriber queue. Fields other than the atomics are
/// written only while the state is kClaimed and read after an acquire load
/// that sees kActive.
struct alignas(kCacheLine) Connection {
  std::atomic<ConnectionState> state{ConnectionState::kFree};
  std::uint32_t block = 0;                  ///< Publisher block of the owning pool.
  std::uint32_t bit = 0;                    ///< This connection's bit in chunk holder masks.
  std::uint32_t subscriber_slot = 0;        ///< Registry subscriber entry ...
  std::uint32_t subscriber_generation = 0;  ///< ... and its generation.
  OverflowPolicy overflow = OverflowPolicy::kRejectNewest;
  std::uint32_t reliable = 0;  ///< Reliability::kReliable (a timed-out wait is counted, never an error).
  std::int64_t block_timeout_ns = 0;
  std::int64_t quarantine_after_ns = 0;  ///< kBlockPublisher: 0 or when a full queue is quarantined.
  /// Written by the subscriber (its taking thread only, relaxed: single
  /// writer) when it drops a message of this connection that failed
  /// verification or decoding; read (relaxed) by the publisher's counters()
  /// and by its reclaimer, which keeps the count when the connection goes.
  /// On the first line, not the publisher's statistics line: it changes only
  /// on a rejection, so it costs the publisher's line nothing.
  std::atomic<std::uint64_t> rejected{0};

  /// The publisher may evict the oldest entry: the subscriber pops by
  /// compare-exchange (SpscRing::try_pop_contended()).
  [[nodiscard]] bool evictable() const noexcept {
    return overflow == OverflowPolicy::kDropOldest || quarantine_after_ns > 0;
  }

  /// Statistics written by the publisher only (relaxed, single writer) and
  /// read by the subscriber, on a line of their own.
  alignas(kCacheLine) std::atomic<std::uint64_t> delivered{0};
  std::atomic<std::uint64_t> dropped_full{0};
  std::atomic<std::uint64_t> dropped_oldest{0};
  std::atomic<std::uint64_t> dropped_timeout{0};
  std::atomic<std::uint64_t> quarantines{0};
  std::atomic<std::uint32_t> high_water{0};
  std::atomic<std::uint32_t> quarantined{0};  ///< 1 while quarantined.
  /// The publisher's own state (its thread only).
  std::int64_t full_since_ns = 0;      ///< When the queue was first seen full (0: not full).
  std::uint32_t above_high_water = 0;  ///< Backpressure reported, not yet drained below.
  /// Its slots are a range of the pool's queue slots (reset() by the creator).
  SharedSpscRing<RingEntry> ring;
};

enum class BlockState : std::uint32_t {
  kFree = 0,
  kActive = 1,   ///< Its publisher exists; only the publisher's thread reclaims.
  kRetired = 2,  ///< Its publisher is gone; the owner's service thread reclaims.
};

/// The shared part of one publisher.
struct alignas(kCacheLine) PublisherBlock {
  std::atomic<BlockState> state{BlockState::kFree};
  std::uint32_t publisher_slot = 0;        ///< Registry publisher entry ...
  std::uint32_t publisher_generation = 0;  ///< ... and its generation.
  std::uint32_t topic = 0;
  /// Transient-local publishers: messages kept for late joiners (0: volatile).
  std::uint32_t history_depth = 0;
  /// The masks below have a connection's bit where a chunk's holder ledger
  /// has it (holder_bits.hpp): word 0 connections 0..60, words 1 and 2 the
  /// rest; the active and joining masks share one line, the one publish()
  /// reads.
  /// Bits whose connection the publisher pushes to. Set (release) by the
  /// creator of a connection, cleared by its reclaimer.
  alignas(kCacheLine) std::atomic<std::uint64_t> active_bits[kHolderWords] = {};
  /// Transient-local publishers: connections created by a subscriber that
  /// wait for the publisher's process to queue its history to them and move
  /// them to active_bits (the ring has one producer, so only it may).
  std::atomic<std::uint64_t> joining_bits[kHolderWords] = {};
  /// Bits assigned to a connection, active or waiting to be reclaimed.
  std::atomic<std::uint64_t> allocated_bits[kHolderWords] = {};
  /// Connection index of each bit; written before the bit is set.
  std::atomic<std::uint16_t> connection_of_bit[kMaxSubscribersPerPublisher];
};

/// A snapshot of one of a block's masks, each word loaded with `order` and
/// masked to the bits a connection may own (another process writes them).
inline ConnectionSet load_connections(const std::atomic<std::uint64_t> (&words)[kHolderWords],
                                      std::memory_order order) noexcept {
  ConnectionSet set;
  for (std::uint32_t w = 0; w < kHolderWords; ++w) {
    set.words[w] = words[w].load(order) & kConnectionBitsOfWord[w];
  }
  return set;
}

using QueueSlot = RingSlot<RingEntry>;

struct PoolSegment {
  SegmentHeader header;
  std::uint32_t owner_participant = 0;
  std::uint32_t owner_generation = 0;
  /// Sizes of the three tables after this head, written by the owner before
  /// `ready`; a peer checks them against the mapping (PoolLayout::of()).
  std::uint32_t connection_count = 0;
  std::uint32_t queue_slot_count = 0;
  std::uint32_t publisher_block_count = 0;  ///< pool.publishers
  std::uint32_t reserved = 0;
  // Then, at PoolLayout's offsets: PublisherBlock[publisher_block_count],
  // Connection[connection_count], QueueSlot[queue_slot_count], and the
  // ChunkPool directory and chunks.
};

/// Where the tables of a pool segment lie: computed here from the three
/// counts (never read as offsets from shared memory).
struct PoolLayout {
  std::uint32_t publisher_blocks = 0;
  std::uint32_t connections = 0;
  std::uint32_t queue_slots = 0;
  std::size_t blocks_offset = 0;
  std::size_t connections_offset = 0;
  std::size_t queue_slots_offset = 0;
  std::size_t chunk_area_offset = 0;

  /// The layout for these counts; each must be within 1..its maximum.
  static constexpr PoolLayout of(std::uint32_t publisher_blocks, std::uint32_t connections,
                                 std::uint32_t queue_slots) noexcept {
    PoolLayout layout{.publisher_blocks = publisher_blocks, .connections = connections, .queue_slots = queue_slots};
    layout.blocks_offset = round_up(sizeof(PoolSegment));
    layout.connections_offset = layout.blocks_offset + std::size_t{publisher_blocks} * sizeof(PublisherBlock);
    layout.queue_slots_offset = layout.connections_offset + std::size_t{connections} * sizeof(Connection);
    layout.chunk_area_offset = layout.queue_slots_offset + std::size_t{queue_slots} * sizeof(QueueSlot);
    return layout;
  }
  /// Bytes of a pool segment with these tables and `chunk_bytes` of chunks.
  [[nodiscard]] constexpr std::size_t segment_bytes(std::size_t chunk_bytes) const noexcept {
    return chunk_area_offset + chunk_bytes;
  }
  [[nodiscard]] static constexpr bool counts_in_range(std::uint32_t publisher_blocks, std::uint32_t connections,
                                                      std::uint32_t queue_slots) noexcept {
    return publisher_blocks >= 1 && publisher_blocks <= kMaxPublishersPerNode && connections >= 1 &&
           connections <= kMaxConnectionsPerNode && queue_slots >= 1 && queue_slots <= kMaxQueueSlotsPerNode;
  }

 private:
  static constexpr std::size_t round_up(std::size_t bytes) noexcept {
    return (bytes + kCacheLine - 1) / kCacheLine * kCacheLine;
  }
};

static_assert(offsetof(PublisherBlock, joining_bits) + sizeof(PublisherBlock::joining_bits) -
                      offsetof(PublisherBlock, active_bits) <=
                  kCacheLine,
              "publish() reads the active and joining masks from one line");
static_assert(sizeof(PublisherBlock) == 9 * kCacheLine, "a publisher block: 576 bytes (docs/configuration.md)");
static_assert(kMaxPublishersPerNode <= 0xFFFF, "ChunkHeader::publisher_block holds a block index in 16 bits");
static_assert(std::is_standard_layout_v<PoolSegment>, "shared-memory layout must be standard");
static_assert(std::is_trivially_destructible_v<PoolSegment>, "nothing to destroy in shared memory");
static_assert(sizeof(Connection) == 4 * kCacheLine, "a connection: settings, statistics, producer, consumer lines");
static_assert(sizeof(QueueSlot) == kCacheLine, "a queue slot is one cache line");
static_assert(std::is_trivially_destructible_v<Connection>, "nothing to destroy in shared memory");
static_assert(alignof(Connection) == kCacheLine && sizeof(Connection) % kCacheLine == 0,
              "connections do not share cache lines");
static_assert(offsetof(Connection, rejected) + sizeof(Connection::rejected) <= kCacheLine,
              "the subscriber's rejection counter stays off the publisher's statistics line");

}  // namespace axon::shm
