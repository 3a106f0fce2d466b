// Layout of a participant's statistics segment, {shm_dir}/axon_d{N}_p{slot}_g
// {generation}.stats: one entry per publisher block of its pool and one per
// subscriber the domain allows, written by that participant alone and mapped
// read-only by tools (docs/design/live-stats.md). Nothing in it is ever an
// index or a size for its writer; readers check the head against the file's
// size before they compute a single offset.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <type_traits>

#include "axon/network_counters.hpp"
#include "transports/shm/latency_histogram.hpp"
#include "transports/shm/segment.hpp"
#include "transports/shm/shm_constants.hpp"

namespace axon::shm {

/// The state word of an entry: (generation << 1) | 1 while live, the
/// generation alone while free or being (re)written, 0 never used.
///
/// Memory ordering (a sequence lock over the identity): the writer claims an
/// entry by storing the next generation without the live bit (relaxed), a
/// release fence, the identity and zeroed counters (relaxed atomics, plain
/// for the identity), then the live word (release). A reader loads the word
/// (acquire), copies the entry, issues an acquire fence and loads the word
/// again: the same live word both times means it copied one endpoint.
inline constexpr std::uint64_t kStatsLiveBit = 1;

/// Who the endpoint is in the registry (EndpointEntry of `registry_slot`,
/// with `registry_generation`; its stats_slot field names this entry).
struct alignas(8) StatsIdentity {
  std::uint32_t registry_slot = 0;
  std::uint32_t registry_generation = 0;
  std::uint32_t topic_slot = 0;  ///< The registry's TopicEntry.
  std::uint32_t depth = 0;       ///< Subscribers: the queue depth; publishers: 0.
  char topic[kMaxTopicNameBytes] = {};
};

/// The identity is copied as relaxed 64-bit words on both sides (the state
/// word orders them), so that a reader racing a rewrite reads defined values
/// and then drops them (as the rings copy their entries).
inline void store_identity(StatsIdentity& to, const StatsIdentity& from) noexcept {
  std::uint64_t words[sizeof(StatsIdentity) / 8];
  std::memcpy(words, &from, sizeof(words));
  auto* target = reinterpret_cast<std::uint64_t*>(&to);
  for (std::size_t i = 0; i < std::size(words); ++i) {
    std::atomic_ref<std::uint64_t>(target[i]).store(words[i], std::memory_order_relaxed);
  }
}

inline StatsIdentity load_identity(const StatsIdentity& from) noexcept {
  std::uint64_t words[sizeof(StatsIdentity) / 8];
  auto* source = const_cast<std::uint64_t*>(reinterpret_cast<const std::uint64_t*>(&from));
  for (std::size_t i = 0; i < std::size(words); ++i) {
    words[i] = std::atomic_ref<std::uint64_t>(source[i]).load(std::memory_order_relaxed);
  }
  StatsIdentity identity;
  std::memcpy(&identity, words, sizeof(words));
  return identity;
}

struct alignas(kCacheLine) PublisherStats {
  std::atomic<std::uint64_t> state{0};
  StatsIdentity identity;
  /// Written by the publishing thread in publish() (relaxed load+store,
  /// single writer; readers take each as a monotonic count).
  struct alignas(kCacheLine) Live {
    std::atomic<std::uint64_t> published{0};
    std::atomic<std::uint64_t> queued{0};
    std::atomic<std::uint64_t> dropped_full{0};
    std::atomic<std::uint64_t> dropped_oldest{0};
    std::atomic<std::uint64_t> dropped_timeout{0};
    /// Payload bytes of the messages counted in `published` (their
    /// payload_bytes as published; chunk headers and unused space not).
    std::atomic<std::uint64_t> published_bytes{0};
  } live;
  /// Copied from the connections in the pool by the node's service thread
  /// once a second (relaxed stores, single writer).
  struct alignas(kCacheLine) Refreshed {
    std::atomic<std::uint64_t> quarantined{0};
    std::atomic<std::uint64_t> rejected_by_subscribers{0};
    std::atomic<std::int64_t> at_ns{0};  ///< CLOCK_MONOTONIC of the last copy; 0: none yet.
    std::atomic<std::uint32_t> high_water{0};
    std::atomic<std::uint32_t> subscribers{0};  ///< Active connections now.
  } refreshed;
};

struct alignas(kCacheLine) SubscriberStats {
  std::atomic<std::uint64_t> state{0};
  StatsIdentity identity;
  /// Written by the taking thread (relaxed load+store, single writer).
  struct alignas(kCacheLine) Live {
    std::atomic<std::uint64_t> taken{0};  ///< Popped from a queue (rejected ones too).
    std::atomic<std::uint64_t> rejected{0};
    std::atomic<std::uint64_t> publishers_lost{0};
  } live;
  /// Summed over its connections by the node's service thread once a second.
  struct alignas(kCacheLine) Refreshed {
    std::atomic<std::uint64_t> queued{0};
    std::atomic<std::uint64_t> dropped_full{0};
    std::atomic<std::uint64_t> dropped_oldest{0};
    std::atomic<std::uint64_t> dropped_timeout{0};
    std::atomic<std::uint64_t> quarantined{0};
    std::atomic<std::int64_t> at_ns{0};
    std::atomic<std::uint32_t> high_water{0};
    std::atomic<std::uint32_t> fill{0};
    std::atomic<std::uint32_t> publishers{0};  ///< Connected publishers now.
  } refreshed;
  LatencyWindows latency;
};

/// The head of the segment; the tables follow at StatsLayout's offsets.
struct StatsSegment {
  SegmentHeader header;  ///< kind kStats, stats_abi_hash(), the file's size.
  std::uint32_t domain_id = 0;
  std::uint32_t participant_slot = 0;
  std::uint32_t participant_generation = 0;
  std::int32_t pid = 0;
  std::uint64_t start_time = 0;  ///< With pid: the process (ProcessIdentity).
  std::uint32_t publisher_capacity = 0;
  std::uint32_t subscriber_capacity = 0;
  /// 1: take() stamps with the time-stamp counter (TakeClock), 0: with clock_gettime.
  std::uint32_t take_clock_counter = 0;
  std::uint32_t reserved = 0;
  char node_name[kMaxParticipantNameBytes] = {};
  /// Subscriber entries [0, this) have their memory allocated; a reader
  /// reads no further (the rest of the file is a hole: reading it would
  /// allocate). Release after the allocation, pairs with readers' acquire.
  alignas(kCacheLine) std::atomic<std::uint32_t> subscribers_reserved{0};
};

/// The node's network counters (axon::NetworkCounters, in the order of
/// axon::kNetworkCounterFields), copied from its UDP and RDMA transports by
/// its service thread once a second; `at_ns` 0: the node has no network
/// transport (or nothing was copied yet).
///
/// Memory ordering: the service thread stores the counters (relaxed), then
/// `at_ns` (release); a reader loads `at_ns` (acquire), then the counters
/// (relaxed). A copy may mix two refreshes: each counter is still a true
/// value of its moment (they only grow).
inline constexpr std::size_t kNetworkStatsSlots = 63;

struct alignas(kCacheLine) NetworkStats {
  std::atomic<std::int64_t> at_ns{0};  ///< CLOCK_MONOTONIC of the last copy.
  std::atomic<std::uint64_t> counters[kNetworkStatsSlots] = {};
};

/// Where the tables lie: computed from the two capacities, never read as
/// offsets from the file.
struct StatsLayout {
  std::uint32_t publishers = 0;
  std::uint32_t subscribers = 0;
  std::size_t network_offset = 0;
  std::size_t publishers_offset = 0;
  std::size_t subscribers_offset = 0;
  std::size_t total_bytes = 0;

  static constexpr StatsLayout of(std::uint32_t publishers, std::uint32_t subscribers) noexcept {
    StatsLayout layout{.publishers = publishers, .subscribers = subscribers};
    layout.network_offset = sizeof(StatsSegment);
    layout.publishers_offset = layout.network_offset + sizeof(NetworkStats);
    layout.subscribers_offset = layout.publishers_offset + (std::size_t{publishers} * sizeof(PublisherStats));
    layout.total_bytes = layout.subscribers_offset + (std::size_t{subscribers} * sizeof(SubscriberStats));
    return layout;
  }
  /// The bytes of subscriber entries [0, count): what a reader may touch.
  [[nodiscard]] constexpr std::size_t bytes_with_subscribers(std::uint32_t count) const noexcept {
    return subscribers_offset + (std::size_t{count} * sizeof(SubscriberStats));
  }
};

static_assert(sizeof(StatsIdentity) % 8 == 0 && std::is_trivially_copyable_v<StatsIdentity>,
              "identities are copied as 64-bit words");
static_assert(sizeof(StatsIdentity) == 144 && sizeof(PublisherStats) == 320 && sizeof(SubscriberStats) == 3840 &&
                  sizeof(StatsSegment) == 256 && sizeof(NetworkStats) == 512,
              "update docs/design/live-stats.md (entry sizes) and kStatsLayoutVersion");
static_assert(sizeof(StatsSegment) % kCacheLine == 0, "the tables start on a cache line");
static_assert(kNetworkCounterFields.size() <= kNetworkStatsSlots, "NetworkStats has a slot for every network counter");
static_assert(std::is_standard_layout_v<StatsSegment> && std::is_standard_layout_v<NetworkStats> &&
                  std::is_standard_layout_v<PublisherStats> && std::is_standard_layout_v<SubscriberStats>,
              "shared-memory layout must be standard");
static_assert(std::is_trivially_destructible_v<NetworkStats> && std::is_trivially_destructible_v<PublisherStats> &&
                  std::is_trivially_destructible_v<SubscriberStats>,
              "nothing to destroy in shared memory");

/// Changes with anything above (checked by readers through the header's ABI hash).
/// 2: PublisherStats::Live::published_bytes (in the line's spare bytes: the sizes did not change).
/// 3: NetworkStats between the head and the publisher entries.
inline constexpr std::uint32_t kStatsLayoutVersion = 3;

constexpr std::uint64_t stats_abi_hash() noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const std::uint64_t v :
       {std::uint64_t{kStatsLayoutVersion}, std::uint64_t{sizeof(StatsSegment)}, std::uint64_t{sizeof(NetworkStats)},
        std::uint64_t{kNetworkCounterFields.size()}, std::uint64_t{sizeof(PublisherStats)},
        std::uint64_t{sizeof(SubscriberStats)}, std::uint64_t{sizeof(LatencyWindow)}, std::uint64_t{kLatencyBuckets},
        std::uint64_t{kLatencyWindows}, std::uint64_t{kMaxTopicNameBytes}, std::uint64_t{kMaxParticipantNameBytes}}) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (i * 8)) & 0xFFU;
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

}  // namespace axon::shm
