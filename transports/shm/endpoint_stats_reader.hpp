// Reads the live statistics of a domain from another process (what `axon
// topic info` and `axon topic delay` show): each participant's statistics
// segment mapped read-only, its head checked before any offset is computed,
// each entry copied under its state word. Never takes the domain lock,
// creates nothing, so a reader that crashes leaves nothing behind
// (docs/design/live-stats.md).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "axon/network_counters.hpp"
#include "axon/result.hpp"
#include "axon/transport.hpp"
#include "transports/shm/latency_histogram.hpp"

namespace axon::shm {

enum class StatsEndpointKind : std::uint8_t { kPublisher, kSubscriber };

/// One publisher or subscriber as its statistics entry had it when read.
struct EndpointStatsSnapshot {
  StatsEndpointKind kind = StatsEndpointKind::kPublisher;
  std::string topic;
  /// The registry's entries (join with its EndpointEntry: the same slot and
  /// generation, whose stats_slot is `stats_slot`; and its TopicEntry).
  std::uint32_t topic_slot = 0;
  std::uint32_t registry_slot = 0;
  std::uint32_t registry_generation = 0;
  /// (registry_slot << 32) | registry_generation: SampleInfo::publisher_id of
  /// a publisher, SubscriberFill::subscriber_id of a subscriber.
  std::uint64_t endpoint_id = 0;
  std::uint32_t stats_slot = 0;  ///< Publishers: their pool block; subscribers: their table slot.
  std::uint32_t depth = 0;       ///< Subscribers: the queue depth.

  /// Publishers: published and the totals' queued and dropped counts are
  /// live; quarantined, high_water and rejected_by_subscribers as of
  /// `refreshed_at_ns`; subscribers_unconnected is not kept (0).
  PublisherCounters publisher;
  std::uint32_t subscribers = 0;      ///< Publishers: connected subscribers as of refreshed_at_ns.
  std::uint64_t published_bytes = 0;  ///< Publishers: the payload bytes of `publisher.published` (live).

  /// Subscribers: taken, rejected and publishers_lost are live; the queue
  /// counters as of `refreshed_at_ns`; publishers_unconnected is not kept (0).
  SubscriberCounters subscriber;
  std::uint32_t fill = 0;        ///< Subscribers: messages queued for it as of refreshed_at_ns.
  std::uint32_t publishers = 0;  ///< Subscribers: connected publishers as of refreshed_at_ns.
  /// Subscribers: the latency from SampleInfo::publish_time_ns to take()
  /// over the last kLatencyWindows seconds, of every take of messages
  /// published 10 us or more apart and a sample of faster ones
  /// (kLatencyMeasureGapNs): `latency.count` <= `subscriber.taken`.
  LatencySummary latency;

  /// CLOCK_MONOTONIC when the node's service thread last copied the counters
  /// that live in its pools (once a second); 0: not yet.
  std::int64_t refreshed_at_ns = 0;
};

/// One participant (node process) of the domain.
struct ParticipantStatsSnapshot {
  std::string path;  ///< Its statistics segment.
  std::uint32_t domain_id = 0;
  std::uint32_t participant_slot = 0;  ///< Its registry ParticipantEntry ...
  std::uint32_t participant_generation = 0;
  pid_t pid = 0;
  std::uint64_t start_time = 0;  ///< ... and its process (pid, start time: /proc/<pid>/stat field 22).
  std::string node_name;
  bool alive = false;  ///< Its process runs (checked through /proc when read).
  /// take() stamps latencies with the CPU's time-stamp counter (else clock_gettime).
  bool take_clock_counter = false;
  std::vector<EndpointStatsSnapshot> endpoints;
  /// CLOCK_MONOTONIC when the node's service thread last copied its network
  /// counters (once a second); 0: the node has no network transport.
  std::int64_t network_at_ns = 0;
  NetworkCounters network;  ///< As of network_at_ns; all 0 when that is 0.
  /// Entries left out because they were corrupt or rewritten while read
  /// twice in a row, each with why.
  std::vector<std::string> skipped;
};

struct DomainStatsSnapshot {
  /// Participants whose process runs, by participant slot.
  std::vector<ParticipantStatsSnapshot> participants;
  /// Statistics files of the domain that could not be read (corrupt, of
  /// another axon build, or of a dead process not reclaimed yet), each with
  /// why; what they said is not in `participants`.
  std::vector<std::string> problems;
};

/// Reads the statistics segment at `path`: kIncompatible when its head is
/// not one of this build's or does not match the file's size, a system
/// error when it cannot be opened or mapped. `now_ns`: the CLOCK_MONOTONIC
/// time the latency windows are read at (axon::monotonic_now_ns()).
/// Allocates; reads /proc for `alive`. Thread-safe.
Result<ParticipantStatsSnapshot> read_participant_stats(const std::string& path, std::int64_t now_ns);

/// Every statistics segment of domain `domain_id` in `shm_dir` (the nodes'
/// NodeOptions::shm_dir; AXON_SHM_DIR or /dev/shm for the tools): the live
/// participants and what was wrong with the rest. An error only when
/// `shm_dir` cannot be listed. Allocates; thread-safe.
Result<DomainStatsSnapshot> read_domain_stats(std::uint32_t domain_id, const std::string& shm_dir);

}  // namespace axon::shm
