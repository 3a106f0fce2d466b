// A domain as an outside process sees it: its participants (nodes), topics,
// publishers and subscribers on this host, read from the domain's registry
// without joining the domain; and the removal of what dead processes left.
// What the `axon` command shows (docs/tools.md); implemented by the
// shared-memory transport, which owns the registry (transports/shm/
// domain_reader.cpp, domain_cleaner.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "axon/network_counters.hpp"
#include "axon/result.hpp"
#include "axon/transport.hpp"

namespace axon {

/// Where a domain's files are: `shm_dir` empty means what Node::create uses
/// (AXON_SHM_DIR, else /dev/shm).
struct DomainAddress {
  std::uint32_t domain_id = 0;
  std::string shm_dir;
};

/// A node (participant) of the domain.
struct ParticipantView {
  std::uint32_t slot = 0;  ///< Its registry entry, with `generation` the node's id in the domain.
  std::uint32_t generation = 0;
  std::string name;
  std::int32_t pid = 0;
  /// Its process runs (the pid and the process's start time both match):
  /// false for a node that died and that no live node has reclaimed yet.
  bool alive = false;
  std::uint64_t pool_bytes = 0;  ///< The size of its shared-memory pool.
  /// Connections and queue slots of its pool (what limits its publishers' subscribers).
  std::uint32_t connections = 0;
  std::uint32_t queue_slots = 0;
};

/// A topic with at least one endpoint on this host.
struct TopicView {
  std::uint32_t slot = 0;
  std::string name;
  std::string type_name;
  std::string serializer;  ///< "raw", "flatbuffers", "protobuf", ...
  std::uint64_t type_hash = 0;
  std::uint32_t type_size = 0;  ///< Raw structs: sizeof; else 0.
  std::uint32_t type_align = 0;
  std::uint64_t max_payload_bytes = 0;  ///< 0: no bound.
};

/// A publisher or a subscriber, with the QoS its registry entry carries.
struct EndpointView {
  GraphEndpointKind kind = GraphEndpointKind::kPublisher;
  /// As GraphEndpoint::endpoint_id: its slot and generation.
  std::uint64_t endpoint_id = 0;
  std::uint32_t topic_slot = 0;        ///< Index into DomainView::topics by TopicView::slot.
  std::uint32_t participant_slot = 0;  ///< Likewise into DomainView::participants.
  /// What carries its messages beyond this host, as its node's transport
  /// registered it (TopicDescriptor::carried_by): "shm" (this host only),
  /// "udp" or "rdma".
  std::string transport;
  // Subscribers only: the queue as the subscriber resolved it.
  std::uint32_t depth = 0;
  /// The deployment file's words: "drop_oldest", "reject_newest",
  /// "latest_only", "block_publisher" ("default" as written by an older node).
  std::string overflow;
  bool reliable = false;
  std::int64_t block_timeout_ns = 0;
  std::int64_t quarantine_after_ns = 0;  ///< 0: never quarantined.
};

/// The domain's sizes (the deployment file's `limits:`).
struct DomainViewLimits {
  std::uint32_t participants = 0;
  std::uint32_t topics = 0;
  std::uint32_t publishers = 0;
  std::uint32_t subscribers = 0;
};

struct DomainView {
  DomainAddress address;  ///< shm_dir resolved.
  /// False: no node of the domain runs or ran on this host (no registry);
  /// everything below is empty then.
  bool exists = false;
  /// True when the tables were copied under the domain lock. False when a
  /// process held the lock past the read's patience (a stopped process, or
  /// a node that is starting): the copy may mix two moments then.
  bool consistent = false;
  std::uint64_t incarnation = 0;  ///< Changes when the domain is created anew.
  DomainViewLimits limits;
  std::vector<ParticipantView> participants;  ///< Active entries, by slot.
  std::vector<TopicView> topics;              ///< Active entries, by slot.
  std::vector<EndpointView> publishers;
  std::vector<EndpointView> subscribers;

  /// The participant and topic of an endpoint (null when the copy was torn).
  [[nodiscard]] const ParticipantView* participant(std::uint32_t slot) const noexcept;
  [[nodiscard]] const TopicView* topic(std::uint32_t slot) const noexcept;
};

/// Reads the domain's registry on this host without joining the domain and
/// without writing anything. The domain lock is taken (flock, never longer
/// than one copy of the registry's tables) when it is free within about
/// 100 ms, else the tables are read without it (consistent = false). Every
/// entry is checked before it is used (indexes, names without their NUL,
/// states). An error: the registry exists but cannot be read (permissions,
/// another axon build's layout, a damaged head), with the fix.
[[nodiscard]] Result<DomainView> read_domain_view(const DomainAddress& address);

/// Chunks of one class held by one subscriber (its queue, or samples it took
/// and still holds).
struct PoolHolderView {
  std::uint64_t subscriber_id = 0;  ///< As EndpointView::endpoint_id; 0 when not in the registry now.
  std::string node;                 ///< The subscriber's node ("?" when not in the registry now).
  std::int32_t pid = 0;
  std::string topic;
  std::uint32_t chunks = 0;
  std::int64_t oldest_age_ns = 0;  ///< Since the oldest of them was published.
};

/// Chunks of one class in use by one publisher of the pool's node.
struct PoolPublisherShare {
  std::uint64_t publisher_id = 0;  ///< As EndpointView::endpoint_id; 0 when not in the registry now.
  std::string topic;
  std::uint32_t chunks = 0;
};

/// One chunk class of a node's pool, as counted in one pass over its chunk
/// headers (another process changes them meanwhile: each count is exact for
/// its chunk at the moment it was read, the sums are a close estimate).
struct PoolClassView {
  std::uint32_t payload_bytes = 0;
  std::uint32_t total_chunks = 0;
  std::uint32_t free_chunks = 0;               ///< Free, or waiting unused in a publisher's cache or reservation.
  std::uint32_t loaned = 0;                    ///< Loaned by a publisher and not published (yet).
  std::uint32_t in_history = 0;                ///< Kept for late joiners (transient local).
  std::uint32_t on_network = 0;                ///< Held for another host (UDP sends, RDMA writes).
  std::uint32_t by_subscribers = 0;            ///< Held by at least one subscriber.
  std::int64_t oldest_in_use_age_ns = -1;      ///< Of the published chunks in use; -1: none.
  std::vector<PoolHolderView> holders;         ///< By subscriber.
  std::vector<PoolPublisherShare> publishers;  ///< By publisher.
};

/// A node's pool, or why it could not be read.
struct NodePoolView {
  ParticipantView node;
  /// Empty when `classes` was read; else why not (the node did not answer
  /// within the patience: stopped or busy; it is dead; ...).
  std::string unreadable;
  std::uint64_t pool_bytes = 0;
  std::vector<PoolClassView> classes;
};

/// The pools of the domain's nodes on this host (every node, or those named
/// `node`). Each is asked for its pool's descriptor on its socket, as the
/// nodes of the domain ask each other (at most `patience` per node: a
/// stopped node costs that and is reported unreadable), mapped read-only,
/// checked as a peer's pool is, counted, and unmapped. Writes nothing.
[[nodiscard]] Result<std::vector<NodePoolView>> read_pool_views(const DomainAddress& address, const std::string& node,
                                                                std::int64_t patience_ns);

/// One publisher -> subscriber queue on this host, as the publisher's pool
/// has it: the counters its publisher keeps (relaxed reads, each exact for
/// its moment) and how full the queue is now.
struct ConnectionView {
  std::uint32_t topic_slot = 0;    ///< As TopicView::slot.
  std::uint64_t publisher_id = 0;  ///< As EndpointView::endpoint_id.
  std::uint64_t subscriber_id = 0;
  std::uint64_t delivered = 0;        ///< Messages queued for the subscriber.
  std::uint64_t dropped_full = 0;     ///< Rejected: the queue was full (reject newest).
  std::uint64_t dropped_oldest = 0;   ///< Evicted unread to make room.
  std::uint64_t dropped_timeout = 0;  ///< A blocking publish gave up.
  std::uint64_t quarantines = 0;      ///< Times the queue was quarantined.
  std::uint64_t rejected = 0;         ///< Taken but failed verification or decoding.
  std::uint32_t high_water = 0;       ///< Most messages queued at once.
  std::uint32_t queued = 0;           ///< Messages waiting now.
  std::uint32_t depth = 0;            ///< How many may wait.
  bool quarantined = false;
};

/// The queues of one topic's publishers on this host.
struct TopicConnections {
  std::vector<ConnectionView> connections;
  /// "node 'x' (pid N): why" for each publishing node whose pool was not read.
  std::vector<std::string> unreadable;
};

/// The queues of `topic`'s publishers (every topic's when `topic` is empty):
/// each publishing node's pool read once, as read_pool_views() reads it.
/// `view` is a read_domain_view() of `address`.
[[nodiscard]] Result<TopicConnections> read_topic_connections(const DomainAddress& address, const DomainView& view,
                                                              const std::string& topic, std::int64_t patience_ns);

/// One subscriber's latency, from each message's publish time to its take(),
/// over the last seconds its node's statistics segment keeps (about 10 s).
/// Percentiles are the upper edges of log buckets (two per power of two).
struct SubscriberLatencyView {
  std::uint64_t subscriber_id = 0;  ///< As EndpointView::endpoint_id.
  std::string topic;
  std::string node;
  std::int32_t pid = 0;
  std::uint64_t taken = 0;  ///< Every take of the subscriber's life.
  /// Takes measured in the window: every take of a stream of up to 100 kHz
  /// per publisher, a sample of faster ones (docs/design/live-stats.md).
  std::uint64_t count = 0;
  std::uint64_t p50_ns = 0;
  std::uint64_t p90_ns = 0;
  std::uint64_t p99_ns = 0;
  std::uint64_t p999_ns = 0;
  std::uint64_t max_ns = 0;
  std::uint64_t mean_ns = 0;
  std::uint32_t seconds = 0;  ///< Seconds of the window that had takes.
};

/// The latency of every subscriber of `topic` on this host, read from the
/// nodes' statistics segments (read-only, no lock). `problems`: files that
/// could not be read, with why.
[[nodiscard]] Result<std::vector<SubscriberLatencyView>> read_topic_latency(const DomainAddress& address,
                                                                            const std::string& topic,
                                                                            std::vector<std::string>& problems);

/// One publisher's traffic, as the publishing thread counts it in its
/// node's statistics segment (live: each count exact for its moment).
struct PublisherTrafficView {
  std::uint64_t publisher_id = 0;  ///< As EndpointView::endpoint_id.
  std::string topic;
  std::string node;
  std::int32_t pid = 0;
  std::uint64_t published = 0;  ///< Messages published, whether any subscriber queued them or not.
  /// Their payload bytes as published (a serialized message's encoded size,
  /// a raw struct's sizeof); chunk headers and unused chunk space not counted.
  std::uint64_t published_bytes = 0;
};

/// A node's network counters (Node::network_counters() of its process), as
/// its service thread copies them into its statistics segment once a second.
struct NodeNetworkView {
  std::string node;
  std::int32_t pid = 0;
  std::uint32_t participant_slot = 0;  ///< With participant_generation: ParticipantView's slot and generation.
  std::uint32_t participant_generation = 0;
  std::int64_t age_ns = 0;  ///< How long ago they were copied (about a second at most while the node runs).
  NetworkCounters counters;
};

/// What the nodes' statistics segments on this host say (read-only, no
/// lock): every publisher's traffic and every subscriber's latency, and the
/// network counters of the nodes that reach other hosts.
struct LiveStatsView {
  std::vector<PublisherTrafficView> publishers;
  std::vector<SubscriberLatencyView> subscribers;
  std::vector<NodeNetworkView> networks;  ///< Nodes with a network transport (UDP, RDMA) only.
  /// Files or entries that could not be read, with why.
  std::vector<std::string> problems;
};

/// Reads every statistics segment of the domain once (the whole of what
/// read_topic_latency() filters by topic). An error only when the shm
/// directory cannot be listed.
[[nodiscard]] Result<LiveStatsView> read_live_stats(const DomainAddress& address);

/// What clean_domain() removed.
struct CleanReport {
  DomainAddress address;             ///< shm_dir resolved.
  std::vector<std::string> removed;  ///< Paths.
};

/// Removes every file the domain's processes left in the shm directory
/// (axon_d<N>.lock, axon_d<N>_*), under the domain lock, when no process
/// uses the domain any more. Refuses (kBusy, naming each live node with its
/// pid) while one does. Nothing to remove is not an error.
[[nodiscard]] Result<CleanReport> clean_domain(const DomainAddress& address);

}  // namespace axon
