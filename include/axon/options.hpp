// Options of nodes, publishers and subscribers: structs with defaults, filled
// with designated initializers.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "axon/result.hpp"

namespace axon {

/// One chunk size class of a node's pool.
struct ChunkClassConfig {
  std::uint32_t payload_bytes = 0;  ///< Largest payload a chunk of this class holds.
  std::uint32_t count = 0;          ///< Chunks of this class.
};

/// Default classes: 256 B up to 16 MiB (about 61 MiB in all).
std::vector<ChunkClassConfig> default_chunk_classes();

/// Where a loan goes when the smallest chunk class that fits it is empty: to
/// at most `max_classes` larger classes, each at most `max_ratio` times the
/// payload capacity of that smallest class, so that small messages never take
/// the few large chunks a camera topic needs (docs/design/shm-core.md, "The
/// chunk pool"). Beyond that the loan comes back exhausted() (an outcome).
struct ChunkFallback {
  std::uint32_t max_classes = 1;  ///< 0: a loan uses its own class only.
  std::uint32_t max_ratio = 16;   ///< 0: no bound on how much larger.

  bool operator==(const ChunkFallback&) const = default;
};

/// Sizes of a domain's registry tables (docs/configuration.md, `limits:`):
/// set by the node that creates the domain (its first), read from the
/// registry by every later one. The registry takes 192 bytes plus, per
/// limit, 104 bytes a node, 320 a topic, 56 a publisher and 120 a
/// subscriber: 1.34 MiB with the defaults. Each registry scan (advertise,
/// subscribe, a node leaving) walks the tables, so it costs more as they grow.
/// publishers_per_topic is no table of the registry: each subscriber's
/// link table, 96 bytes a publisher in the subscriber's process.
struct DomainLimits {
  static constexpr std::uint32_t kMaxNodes = 4096;
  static constexpr std::uint32_t kMaxTopics = 65536;
  static constexpr std::uint32_t kMaxPublishers = 65536;
  static constexpr std::uint32_t kMaxSubscribers = 65536;
  static constexpr std::uint32_t kMaxPublishersPerTopic = 1024;
  std::uint32_t nodes = 256;         ///< Nodes in the domain at once, 1..kMaxNodes.
  std::uint32_t topics = 2048;       ///< Topics with an endpoint, 1..kMaxTopics.
  std::uint32_t publishers = 4096;   ///< Publishers of all nodes, 1..kMaxPublishers.
  std::uint32_t subscribers = 4096;  ///< Subscribers of all nodes, 1..kMaxSubscribers.
  /// Publishers of one topic (what one subscriber reads from), 1..kMaxPublishersPerTopic.
  std::uint32_t publishers_per_topic = 64;

  bool operator==(const DomainLimits&) const = default;
};

struct NodeOptions {
  /// Independent systems on one host use different domains. Default: the
  /// AXON_DOMAIN environment variable, else 0.
  std::optional<std::uint32_t> domain_id;
  /// Chunk classes of this node's pool; empty means default_chunk_classes().
  std::vector<ChunkClassConfig> chunk_classes;
  /// How far this node's loans fall through to larger classes. Unset: the
  /// config file's pool.chunk_fallback, else ChunkFallback{} (1 class, 16x).
  std::optional<ChunkFallback> chunk_fallback;
  /// Directory of the named registry segment. Default: AXON_SHM_DIR, else /dev/shm.
  std::string shm_dir;
  /// Mode of the named files this node creates (registry, socket).
  mode_t file_mode = 0600;
  /// Group given access when file_mode has group bits (empty: the user's group).
  std::string group;
  /// The bound on noticing a dead peer. With pidfds (Linux 5.3+) the kernel
  /// reports a peer's exit at once and an idle node wakes only for a sweep
  /// every 20 periods; without them, peers are checked every period.
  std::uint32_t liveness_period_ms = 50;
  /// Publishers this node may have at once: the publisher blocks of its
  /// pool (576 bytes of shared memory each). One more advertise() is refused
  /// naming pool.publishers. Unset: the config file's pool.publishers, else
  /// 32. 1..4096.
  std::optional<std::uint32_t> pool_publishers;
  /// Entries of this node's connection table: the publisher x subscriber
  /// pairs its pool serves at once (each 256 bytes of shared memory). Unset:
  /// the config file's pool.connections, else 256. 1..16384.
  std::optional<std::uint32_t> pool_connections;
  /// Queue slots (64 bytes each) shared by the subscriber queues of this
  /// node's publishers: a queue takes its subscriber's depth rounded up to a
  /// power of two. Unset: the config file's pool.queue_slots, else 4096
  /// (256 KiB). 1..1048576.
  std::optional<std::uint32_t> pool_queue_slots;
  /// The domain's table sizes when this node creates it. Unset: the config
  /// file's `limits:` (keys it leaves out take DomainLimits' defaults), else
  /// whatever the domain has (DomainLimits{} when this node creates it). Set
  /// either way, a node refuses to join a domain created with other limits
  /// (Node::create fails, naming both), so that no node runs with limits it
  /// did not get.
  std::optional<DomainLimits> domain_limits;
  /// Real-time memory (see docs/design/shm-core.md, "Real-time memory"). These
  /// apply to this node's pool and to every peer pool it maps; each costs
  /// time (and, locked, unswappable memory) once, when the pool is mapped.
  /// Populate every page of the pool up front, so that the first loan,
  /// publish or take does not page-fault.
  bool prefault_memory = false;
  /// mlock the pools this node maps, so they are never paged out (implies
  /// prefaulting). Needs CAP_IPC_LOCK or an RLIMIT_MEMLOCK (`ulimit -l`) of
  /// the pools' size; else Node::create fails with a message saying which.
  bool lock_memory = false;
  /// Back this node's pool with 2 MiB huge pages (fewer TLB misses). Its size
  /// is rounded up to whole pages, which must be reserved beforehand
  /// (/proc/sys/vm/nr_hugepages); too few free is an error, never a silent
  /// fall back to normal pages.
  bool huge_pages = false;
  /// Deployment config file (docs/configuration.md). Empty: the AXON_CONFIG
  /// environment variable, else none (one host, every default). The node
  /// finds its entry by name: chunk_classes from the file apply when the ones
  /// above are empty, a memory option is on when either side turns it on, and
  /// the file's domain applies when neither domain_id nor AXON_DOMAIN is set.
  std::string config_path;
};

/// Which messages a subscriber's queue keeps (DDS HISTORY).
enum class History : std::uint8_t {
  kKeepLast,  ///< The newest `depth` messages: a full queue drops its oldest.
  kKeepAll,   ///< Every message, up to `depth` (the resource limit): a full queue
              ///< rejects the newest (best effort) or holds the publisher (reliable).
};

/// Whether a publisher may drop a message for this subscriber (DDS RELIABILITY).
enum class Reliability : std::uint8_t {
  kBestEffort,  ///< A full queue drops (by the overflow policy).
  kReliable,    ///< The publisher waits for room, at most block_timeout_ns, then
                ///< publish()'s status counts it in timed_out: never a silent drop.
};

/// What a subscriber's queue does when it is full at publish time. Each
/// subscriber has its own policy: one never holds back another.
enum class Overflow : std::uint8_t {
  kDefault,         ///< From history and reliability: keep-last drops the oldest,
                    ///< keep-all rejects the newest, reliable blocks the publisher.
  kDropOldest,      ///< The oldest queued message makes room (counted).
  kRejectNewest,    ///< The new message is dropped for this subscriber (counted).
  kLatestOnly,      ///< A mailbox of one: always the freshest message (depth 1).
  kBlockPublisher,  ///< The publisher waits for room, at most block_timeout_ns
                    ///< (or quarantine_after_ns, when set).
};

/// When a subscriber checks messages (FlatBuffers) before user code sees them.
enum class Verification : std::uint8_t {
  kCrossProcess,  ///< Messages written by another process (the default).
  kAlways,
  kNever,  ///< Trust every writer: for the last microseconds on a closed system.
};

/// Whether late joiners get messages published before they came (DDS DURABILITY).
enum class Durability : std::uint8_t {
  kVolatile,        ///< Only messages published after the subscriber connected.
  kTransientLocal,  ///< Also the publisher's last durability_depth messages.
};

/// What a publisher's loan does when every chunk it reserved
/// (PublisherQos::reserved_chunks) is in use.
enum class BeyondReservation : std::uint8_t {
  kShared,  ///< Loan from the node's shared classes, as NodeOptions::chunk_fallback allows.
  kRefuse,  ///< Come back exhausted(): the publisher never takes what other topics need.
};

struct PublisherQos {
  /// Largest payload this publisher will send (0: sizeof(T) for raw structs,
  /// the largest chunk class for variable-size messages).
  std::uint64_t max_payload_bytes = 0;
  /// Fail advertise() unless the topic's data path is zero copy.
  bool require_zero_copy = false;
  /// Accept a topic whose FlatBuffers/Protobuf schema hash differs when the
  /// type name is the same (schema evolution by the format's own rules).
  bool allow_compatible_evolution = false;
  /// kTransientLocal: the publisher keeps its last `durability_depth`
  /// messages and hands them to subscribers that join later.
  Durability durability = Durability::kVolatile;
  /// Messages kept for late joiners (1..16) with kTransientLocal.
  std::uint32_t durability_depth = 1;
  /// A subscriber's queue at or above this fill (percent of its depth) is
  /// reported: PublishStatus::full and the on_backpressure handler.
  std::uint32_t high_water_percent = 75;
  /// FlatBuffers: run flatbuffers::Verifier on every message before it is
  /// published, not only on the publisher's first one (and on any built with
  /// the struct-vector pitfall, see create_uninitialized_struct_vector()).
  /// A message that fails is not published: publish() returns kMalformed.
  /// Costs one verification per message. API only (not in the deployment
  /// config).
  bool verify_every_message = false;
  /// Chunks of this publisher's class (the smallest that holds
  /// max_payload_bytes, or the type's size) taken from the node's pool at
  /// advertise() and kept for this publisher alone until it is destroyed, so
  /// that other topics of the node can never take them (0..64; 0: none).
  /// advertise() fails with kNoSpace when the class has fewer free.
  std::uint32_t reserved_chunks = 0;
  /// Where a loan goes when all reserved chunks are in use.
  BeyondReservation beyond_reservation = BeyondReservation::kShared;

  bool operator==(const PublisherQos&) const = default;
};

struct SubscriberQos {
  History history = History::kKeepLast;
  /// Messages queued for this subscriber at most (1..256): the keep-last
  /// depth, or the keep-all resource limit. Preallocated when connecting.
  std::uint32_t depth = 16;
  Reliability reliability = Reliability::kBestEffort;
  Overflow overflow = Overflow::kDefault;
  /// With kBlockPublisher or kReliable: how long a publisher waits for room.
  std::int64_t block_timeout_ns = 100'000'000;
  /// With kBlockPublisher: a queue that stays full this long is quarantined
  /// (treated as kDropOldest and reported) until it drains, so a stuck
  /// subscriber stops costing the publisher its timeout. 0: never.
  std::int64_t quarantine_after_ns = 0;
  /// Samples this subscriber may hold at once (taken, not yet dropped; at
  /// most 64 for decoding serializers such as Protobuf).
  std::uint32_t max_held_samples = 64;
  /// Fail subscribe() unless the topic's data path is zero copy.
  bool require_zero_copy = false;
  /// See PublisherQos::allow_compatible_evolution.
  bool allow_compatible_evolution = false;
  Verification verification = Verification::kCrossProcess;
  /// Executors call the subscription's deadline handler when no message came
  /// for this long. 0: no deadline.
  std::int64_t deadline_ns = 0;

  bool operator==(const SubscriberQos&) const = default;
};

/// The overflow policy `qos` amounts to, or an error naming the conflict
/// (for example kReliable with kDropOldest). kLatestOnly implies depth 1.
struct EffectiveQueue {
  Overflow overflow = Overflow::kDropOldest;
  std::uint32_t depth = 16;
};
Result<EffectiveQueue> effective_queue(const SubscriberQos& qos);

}  // namespace axon
