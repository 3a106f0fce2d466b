// Layout of a domain's registry: the named segment every participant maps to
// find topics, publishers and subscribers (daemonless discovery). All fields
// but the atomics are written and read under the domain lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "axon/transport.hpp"
#include "transports/shm/segment.hpp"
#include "transports/shm/shm_constants.hpp"

namespace axon::shm {

enum class EntryState : std::uint32_t { kFree = 0, kActive = 1 };

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
  std::uint32_t reserved = 0;
};

/// A subscriber's futex word, on a line of its own: publishers of any
/// process signal it, the subscriber's executor sleeps on it.
struct alignas(kCacheLine) SubscriberWake {
  WakeWord word;
};

struct RegistrySegment {
  SegmentHeader header;
  /// Random at creation: tells a recreated domain from its predecessor, whose
  /// participant slots and generations start over.
  std::uint64_t incarnation = 0;
  ParticipantEntry participants[kMaxParticipants];
  TopicEntry topics[kMaxTopics];
  EndpointEntry publishers[kMaxPublishers];
  EndpointEntry subscribers[kMaxSubscribers];
  SubscriberWake subscriber_wake[kMaxSubscribers];
  /// The domain's graph word: its sequence moves whenever a publisher or
  /// subscriber entry is added or removed (a dead participant's by the
  /// liveness round too), so graph watchers sleep on it instead of polling
  /// (docs/design/graph-events.md).
  SubscriberWake graph_wake;
};

// The registry bytes per limit that shm_constants.hpp and the docs state.
static_assert(sizeof(ParticipantEntry) == 104 && sizeof(TopicEntry) == 320 && sizeof(EndpointEntry) == 56 &&
                  sizeof(SubscriberWake) == 64,
              "update the registry's memory cost in shm_constants.hpp and docs/design/shm-core.md");
static_assert(std::is_standard_layout_v<RegistrySegment>, "shared-memory layout must be standard");
static_assert(std::is_trivially_destructible_v<RegistrySegment>, "nothing to destroy in shared memory");

}  // namespace axon::shm
