// Layout of a domain's registry: the named segment every participant maps to
// find topics, publishers and subscribers (daemonless discovery). All fields
// but the atomics are written and read under the domain lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "axon/transport.hpp"
#include "transports/shm/segment.hpp"
#include "transports/shm/shm_constants.hpp"

namespace axon::shm {

enum class EntryState : std::uint32_t { kFree = 0, kActive = 1 };

/// Whether a topic's schema file exists (TopicEntry::schema_state).
enum class SchemaState : std::uint32_t { kNone = 0, kWriting = 1, kStored = 2 };

struct ParticipantEntry {
  EntryState state = EntryState::kFree;
  std::uint32_t generation = 0;  ///< Bumped each time the slot is taken.
  std::int32_t pid = 0;
  /// Entries of its pool's connection table (pool.connections): what the
  /// connection limits of advertise() and subscribe() check against. Only
  /// compared, never an index.
  std::uint32_t connections = 0;
  /// Its pool's queue slots (pool.queue_slots), likewise only compared.
  std::uint32_t queue_slots = 0;
  std::uint32_t reserved = 0;
  std::uint64_t start_time = 0;
  std::uint64_t pool_bytes = 0;
  char name[kMaxParticipantNameBytes] = {};
};

struct alignas(kCacheLine) TopicEntry {
  /// Bumped (release) whenever a publisher of the topic comes or goes;
  /// subscribers load it (acquire) on take() and rescan when it moved.
  std::atomic<std::uint64_t> publishers_version{0};
  EntryState state = EntryState::kFree;
  std::uint32_t generation = 0;
  std::uint64_t type_hash = 0;
  std::uint64_t max_payload_bytes = 0;
  std::uint32_t type_size = 0;
  std::uint32_t type_align = 0;
  char name[kMaxTopicNameBytes] = {};
  char type_name[kMaxTypeNameBytes] = {};
  char serializer[16] = {};
  std::uint32_t type_version = 0;  ///< TypeIdentity::version of the first endpoint.
  /// The topic's schema file (topic_schema_file.hpp, docs/design/schemas.md):
  /// kNone, or kWriting from before its first byte is written (so that a
  /// writer that dies leaves a name to unlink), then kStored with its size
  /// and hash, which a reader checks the file against.
  SchemaState schema_state = SchemaState::kNone;
  std::uint32_t schema_bytes = 0;
  std::uint32_t reserved = 0;
  std::uint64_t schema_hash = 0;
};

struct EndpointEntry {
  EntryState state = EntryState::kFree;
  std::uint32_t generation = 0;
  std::uint32_t topic = 0;
  std::uint32_t participant = 0;
  std::uint32_t participant_generation = 0;
  std::uint32_t pool_block = 0;          ///< Publishers: block in the participant's pool.
  std::uint32_t depth = 0;               ///< Subscribers: queue depth ...
  std::uint32_t overflow = 0;            ///< ... overflow policy ...
  std::int64_t block_timeout_ns = 0;     ///< ... how long a publisher may block ...
  std::int64_t quarantine_after_ns = 0;  ///< ... when a full queue is quarantined ...
  std::uint32_t reliable = 0;            ///< ... and whether it is Reliability::kReliable.
  /// Its entry in its participant's statistics segment (stats_layout.hpp,
  /// docs/design/live-stats.md): publishers' = pool_block, subscribers' a
  /// slot of that segment's subscriber table; kNoStatsSlot: none. Only a
  /// reader's hint, checked against that segment's capacity before use.
  std::uint32_t stats_slot = 0;
  /// What carries its messages beyond this host (TopicDescriptor::carried_by):
  /// "shm" (this host only), "udp" or "rdma", NUL-padded. For tools only: a
  /// reader takes it up to its first NUL or the array's end.
  char transport[kMaxCarriedByBytes + 1] = {};
};
static_assert(std::is_trivially_copyable_v<EndpointEntry>);

/// EndpointEntry::stats_slot of an endpoint without statistics.
inline constexpr std::uint32_t kNoStatsSlot = ~std::uint32_t{0};

/// A subscriber's futex word, on a line of its own: publishers of any
/// process signal it, the subscriber's executor sleeps on it.
struct alignas(kCacheLine) SubscriberWake {
  WakeWord word;
};

/// The sizes of a domain's registry tables (NodeOptions::domain_limits, the
/// deployment file's `limits:`): chosen by the node that creates the
/// registry, stored in its head, and read by every later joiner.
struct RegistryLimits {
  std::uint32_t participants = kDefaultParticipants;
  std::uint32_t topics = kDefaultTopics;
  std::uint32_t publishers = kDefaultPublishers;
  std::uint32_t subscribers = kDefaultSubscribers;
  /// Not a table of the registry: the size of each subscriber's link table
  /// (in its own process), stored here so that every node agrees on it.
  std::uint32_t publishers_per_topic = kDefaultPublishersPerTopic;
  friend bool operator==(const RegistryLimits&, const RegistryLimits&) = default;

  /// Each within 1..its kMax*Limit (what the layout's offsets are computed for).
  [[nodiscard]] constexpr bool in_range() const noexcept {
    return participants >= 1 && participants <= kMaxParticipantsLimit && topics >= 1 && topics <= kMaxTopicsLimit &&
           publishers >= 1 && publishers <= kMaxPublishersLimit && subscribers >= 1 &&
           subscribers <= kMaxSubscribersLimit && publishers_per_topic >= 1 &&
           publishers_per_topic <= kMaxPublishersPerTopicLimit;
  }
};

/// The fixed head of a registry segment; the tables follow at the offsets
/// RegistryLayout computes from `limits`.
struct RegistrySegment {
  SegmentHeader header;
  /// Random at creation: tells a recreated domain from its predecessor, whose
  /// participant slots and generations start over.
  std::uint64_t incarnation = 0;
  /// Written by the creator before `ready`, never changed after. Another
  /// process wrote them: a joiner checks them (in range, and the layout they
  /// give matches the file's size) and keeps its own copy.
  RegistryLimits limits;
  /// The domain's graph word: its sequence moves whenever a publisher or
  /// subscriber entry is added or removed (a dead participant's by the
  /// liveness round too), so graph watchers sleep on it instead of polling
  /// (docs/design/graph-events.md).
  SubscriberWake graph_wake;
  // Then, at RegistryLayout's offsets: ParticipantEntry[participants],
  // TopicEntry[topics], EndpointEntry[publishers], EndpointEntry[subscribers],
  // SubscriberWake[subscribers].
};

/// Where the tables of a registry segment lie: computed here from the limits
/// (never read as offsets from shared memory).
struct RegistryLayout {
  RegistryLimits limits;
  std::size_t participants_offset = 0;
  std::size_t topics_offset = 0;
  std::size_t publishers_offset = 0;
  std::size_t subscribers_offset = 0;
  std::size_t subscriber_wake_offset = 0;
  std::size_t total_bytes = 0;

  /// The layout for `limits` (each within its range: RegistryLimits::in_range()).
  static constexpr RegistryLayout of(const RegistryLimits& limits) noexcept {
    RegistryLayout layout{.limits = limits};
    layout.participants_offset = round_up(sizeof(RegistrySegment));
    layout.topics_offset =
        round_up(layout.participants_offset + std::size_t{limits.participants} * sizeof(ParticipantEntry));
    layout.publishers_offset = layout.topics_offset + std::size_t{limits.topics} * sizeof(TopicEntry);
    layout.subscribers_offset = layout.publishers_offset + std::size_t{limits.publishers} * sizeof(EndpointEntry);
    layout.subscriber_wake_offset =
        round_up(layout.subscribers_offset + std::size_t{limits.subscribers} * sizeof(EndpointEntry));
    layout.total_bytes = layout.subscriber_wake_offset + std::size_t{limits.subscribers} * sizeof(SubscriberWake);
    return layout;
  }

 private:
  static constexpr std::size_t round_up(std::size_t bytes) noexcept {
    return (bytes + kCacheLine - 1) / kCacheLine * kCacheLine;
  }
};

// The registry bytes per limit that shm_constants.hpp and the docs state.
static_assert(sizeof(ParticipantEntry) == 104 && sizeof(TopicEntry) == 384 && sizeof(EndpointEntry) == 64 &&
                  sizeof(SubscriberWake) == 64,
              "update the registry's memory cost in shm_constants.hpp and docs/design/shm-core.md");
static_assert(sizeof(RegistrySegment) == 192, "the registry's head: update the docs' size formula");
static_assert(RegistryLayout::of({}).total_bytes == 1'599'680, "the default registry's size the docs state");
static_assert(alignof(TopicEntry) == kCacheLine && alignof(SubscriberWake) == kCacheLine,
              "RegistryLayout rounds the offsets of these tables up to a cache line");
static_assert(std::is_standard_layout_v<RegistrySegment>, "shared-memory layout must be standard");
static_assert(std::is_trivially_destructible_v<RegistrySegment>, "nothing to destroy in shared memory");

}  // namespace axon::shm
