// The plug between the API and a transport (shared memory, UDP; the RDMA
// transport plugs in here too). The API and the scheduler only see these
// interfaces, never which transport carries a topic.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "axon/options.hpp"
#include "axon/outcome.hpp"
#include "axon/result.hpp"
#include "axon/type_identity.hpp"

namespace axon {

/// What a topic carries.
struct TopicDescriptor {
  std::string name;
  TypeIdentity type;
  std::uint64_t max_payload_bytes = 0;
  /// Same type name with another schema hash is accepted (FlatBuffers and
  /// Protobuf only): the endpoint opted in to compatible schema evolution.
  bool allow_compatible_evolution = false;
  /// The type's schema, which an endpoint stores with the topic for tools
  /// (docs/design/schemas.md): a FlatBuffers binary schema (.bfbs), a
  /// serialized Protobuf FileDescriptorSet, or a raw struct's field
  /// description (axon/raw_fields.hpp). Empty: none (an undescribed raw
  /// struct, or a table generated without an embedded schema). At most
  /// kMaxSchemaBytes.
  std::vector<std::byte> schema;
  /// What carries the endpoint's messages beyond this host: "udp" or "rdma",
  /// set by the transport that wraps shared memory before it registers the
  /// endpoint; empty: this host only (shared memory, recorded as "shm"). The
  /// domain's registry keeps it for tools (`axon topic list`'s TRANSPORT);
  /// at most kMaxCarriedByBytes bytes.
  std::string carried_by;
};

/// The longest TopicDescriptor::carried_by.
inline constexpr std::size_t kMaxCarriedByBytes = 7;

/// The largest schema a topic stores: a publisher with a larger one is
/// refused (the message names the topic, the size and this bound).
inline constexpr std::size_t kMaxSchemaBytes = std::size_t{256} * 1024;

/// A topic as the domain records it, for a program that does not know its
/// C++ type (the `axon` tool): the identity its endpoints registered and the
/// schema its first endpoint that had one stored (a publisher, or a typed
/// subscriber).
struct TopicRecord {
  std::string name;
  /// name, hash, serializer, and for raw structs size and alignment, as
  /// registered; version as registered (0 for other formats).
  TypeIdentity type;
  std::uint64_t max_payload_bytes = 0;
  std::vector<std::byte> schema;  ///< Empty: none stored, or it failed its checks (schema_problem).
  /// Why `schema` is empty when the topic has one that could not be read
  /// (damaged or missing file), in words for the user; empty otherwise.
  std::string schema_problem;
};

/// Metadata a subscriber sees with each sample.
struct SampleInfo {
  std::uint64_t sequence = 0;        ///< Per publisher, from 1, no gaps unless dropped.
  std::int64_t publish_time_ns = 0;  ///< CLOCK_MONOTONIC when published.
  std::uint64_t publisher_id = 0;    ///< Unique among live publishers of the domain.
  std::uint32_t payload_bytes = 0;
};

/// A chunk loaned to a publisher: payload memory in the transport.
struct LoanedChunk {
  std::byte* payload = nullptr;
  std::uint32_t capacity_bytes = 0;
  void* handle = nullptr;  ///< Transport's own reference to the chunk.
};

/// A chunk a subscriber took.
struct ReceivedChunk {
  const std::byte* payload = nullptr;  ///< First byte of the message.
  SampleInfo info;
  void* handle = nullptr;
  std::uint32_t source = 0;   ///< Transport's own index of where it came from.
  bool same_process = false;  ///< Written by this process (no need to verify it).
};

/// Why messages did not reach a subscriber, and how full its queue got.
/// Written by publishers, summed over the subscriber's connections.
struct QueueCounters {
  std::uint64_t queued = 0;           ///< Messages publishers put in the queue.
  std::uint64_t dropped_full = 0;     ///< Rejected because the queue was full.
  std::uint64_t dropped_oldest = 0;   ///< Evicted unread to make room for newer ones.
  std::uint64_t dropped_timeout = 0;  ///< A blocking publisher gave up waiting.
  std::uint64_t quarantined = 0;      ///< Times the queue was quarantined.
  std::uint32_t high_water = 0;       ///< Most messages queued at once.
};

/// What a subscriber saw so far.
struct SubscriberCounters {
  std::uint64_t taken = 0;            ///< Messages handed to user code.
  std::uint64_t rejected = 0;         ///< Messages that failed verification or decoding.
  std::uint64_t publishers_lost = 0;  ///< Publishers that left or died while connected.
  QueueCounters queue;
  /// Publishers of the topic this subscriber is not connected to yet (their
  /// pool cannot be mapped yet, or it has no free connection until one that
  /// closed is reclaimed); it retries every 100 ms while this is not 0.
  std::uint32_t publishers_unconnected = 0;
};

/// One subscriber as its publisher sees it.
struct SubscriberFill {
  std::uint64_t subscriber_id = 0;  ///< Unique among live subscribers of the domain.
  std::uint32_t queued = 0;         ///< Messages waiting in its queue now.
  std::uint32_t depth = 0;
  bool quarantined = false;
  QueueCounters counters;
};

/// Totals of one publisher.
struct PublisherCounters {
  std::uint64_t published = 0;
  QueueCounters totals;  ///< Over every subscriber it ever had; high_water is the largest.
  /// Subscribers of the topic (on this host) that this publisher does not
  /// push to yet: they connect themselves, retrying while a connection that
  /// closed waits to be reclaimed (the publisher's next publish does that).
  std::uint32_t subscribers_unconnected = 0;
  /// Messages its subscribers took but dropped because they failed
  /// verification or decoding (each subscriber's counters().rejected, summed
  /// over every subscriber of this host it ever had). Not nonzero for a
  /// healthy publisher: a message that reached no user code.
  std::uint64_t rejected_by_subscribers = 0;
};

/// Passed to the on_backpressure handler when a subscriber's queue reaches the
/// publisher's high-water mark (once per crossing, not on every publish).
struct BackpressureEvent {
  std::uint64_t subscriber_id = 0;
  std::uint32_t queued = 0;
  std::uint32_t depth = 0;
};

/// A futex word in shared memory, one per subscriber. Waiters count
/// themselves in `waiters`, then sleep on `sequence`; a publisher that queued
/// a message bumps `sequence` and wakes them only when `waiters` is not zero,
/// so a busy subscriber costs its publishers no system call.
struct WakeWord {
  std::atomic<std::uint32_t> sequence{0};
  std::atomic<std::uint32_t> waiters{0};
};

/// What a thread waiting for subscribers may watch besides their WakeWords,
/// for a transport whose messages arrive on something that thread can sleep
/// on itself: the waiter then handles the arrival in its own wake-up instead
/// of being woken a second time by the transport's thread (UDP: its socket,
/// read in the wait; RDMA: its completion channel, then the completion
/// queue polled in after_sleep(); docs/design/scheduler.md, "Wait sources").
/// How it sleeps is the transport's (src/words_and_fd_wait.hpp sleeps on
/// futex words and one fd at once). The scheduler, on the waiting thread:
///   counts itself a waiter on `words` (futex::Waiter), checks readiness,
///   calls sleep(words, seen, timeout_ns),
///   stops counting itself a waiter (so what the source delivers wakes nobody),
///   calls after_sleep() if sleep() returned kArrived.
/// Valid while the subscriber port that returned it lives. Several threads
/// may wait on one source at once.
class WaitSource {
 public:
  enum class Slept : std::uint8_t {
    kDidNotSleep,  ///< Cannot sleep here: the scheduler sleeps on the words alone.
    kWoken,        ///< A word moved, a timeout, a signal: nothing for after_sleep().
    kArrived,      ///< Something of the source's arrived: after_sleep() handles it.
  };
  virtual ~WaitSource() = default;
  /// Sleeps until one of `words` moves away from `seen` (same index; futex
  /// words of any transport, at most 128), the source has something for the
  /// waiter, or `timeout_ns` passes (> 0).
  virtual Slept sleep(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen,
                      std::int64_t timeout_ns) noexcept = 0;
  /// Handles what arrived (delivers it, as the transport's thread would),
  /// on the thread whose sleep() returned kArrived, right after it.
  virtual void after_sleep() noexcept = 0;
  /// For a waiter that spins instead of sleeping: handles what has arrived
  /// now, as after_sleep() would, without a system call and without waiting
  /// (RDMA: one batch of the completion queue when its turn is free). True
  /// when it handled something. Default: nothing to poll.
  virtual bool poll() noexcept { return false; }
};

/// Transport side of one publisher. Thread safety: one thread at a time.
class PublisherPort {
 public:
  virtual ~PublisherPort() = default;
  /// A chunk with room for `payload_bytes`; kPoolExhausted (an outcome: no
  /// Error, no allocation) when none is free.
  virtual LoanResult<LoanedChunk> loan(std::size_t payload_bytes) noexcept = 0;
  /// Who holds the chunks that the last loan() that came back
  /// kPoolExhausted could have used, and what to change. Slow path (formats
  /// a message); empty when the transport does not say. Same thread rules.
  [[nodiscard]] virtual std::string explain_exhausted() const { return {}; }
  /// Sends `payload_bytes` of the loaned chunk, starting `payload_offset`
  /// bytes into it, to every subscriber. The result always carries the
  /// status (subscribers that timed out are counted in it, not an error);
  /// a chunk this port did not loan is a failure (see PublishResult).
  virtual PublishResult publish(LoanedChunk chunk, std::size_t payload_bytes,
                                std::size_t payload_offset = 0) noexcept = 0;
  /// Gives an unpublished loan back.
  virtual void discard(LoanedChunk chunk) noexcept = 0;
  /// Subscribers currently connected.
  [[nodiscard]] virtual std::uint32_t subscriber_count() const noexcept = 0;
  /// Fill level and counters of each connected subscriber, at most
  /// out.size(); returns how many were written.
  [[nodiscard]] virtual std::size_t subscriber_fill(std::span<SubscriberFill> out) const noexcept = 0;
  [[nodiscard]] virtual PublisherCounters counters() const noexcept = 0;
  /// Called inside publish() when a subscriber's queue reaches the high-water
  /// mark. Set it before publishing (not thread-safe against publish()).
  virtual void on_backpressure(std::function<void(const BackpressureEvent&)> handler) = 0;
  /// The topic, for messages that name it (empty: the transport does not say).
  [[nodiscard]] virtual std::string_view topic_name() const noexcept { return {}; }
};

/// Transport side of one subscriber. Thread safety: take() from one thread
/// at a time; release() from any thread.
class SubscriberPort {
 public:
  virtual ~SubscriberPort() = default;
  /// The oldest queued message of some publisher; kNothingQueued (an outcome: no
  /// Error, no allocation) when none is queued.
  virtual TakeResult<ReceivedChunk> take() noexcept = 0;
  /// Gives a taken chunk back.
  virtual void release(const ReceivedChunk& chunk) noexcept = 0;
  /// Gives back a chunk whose bytes are not a valid message: counted in
  /// counters().rejected and logged (rate-limited); user code never sees it.
  virtual void reject(const ReceivedChunk& chunk, std::string_view reason) noexcept = 0;
  [[nodiscard]] virtual SubscriberCounters counters() const noexcept = 0;
  /// counters().publishers_lost without the rest (lock-free, any thread).
  [[nodiscard]] virtual std::uint64_t publishers_lost() const noexcept = 0;
  /// Publishers currently connected.
  [[nodiscard]] virtual std::uint32_t publisher_count() noexcept = 0;
  /// Whether take() has a message now; like take(), notices publishers that
  /// came or went. Same thread rules as take().
  [[nodiscard]] virtual bool has_data() noexcept = 0;
  /// The word this subscriber's publishers signal (see WakeWord); nullptr
  /// when the transport cannot wake a waiter (poll it instead).
  [[nodiscard]] virtual WakeWord* wake_word() noexcept = 0;
  /// What a waiter of this subscriber may sleep on besides wake_word() (see
  /// WaitSource); nullptr: the word alone.
  [[nodiscard]] virtual WaitSource* wait_source() noexcept { return nullptr; }
};

/// Which side of a topic a graph endpoint is.
enum class GraphEndpointKind : std::uint8_t { kPublisher, kSubscriber };

/// One publisher or subscriber of a topic as the domain's graph shows it.
struct GraphEndpoint {
  GraphEndpointKind kind = GraphEndpointKind::kPublisher;
  /// Unique among the domain's live endpoints of this kind (a slot and the
  /// generation it was taken with), so one that leaves and another that takes
  /// its place are two endpoints.
  std::uint64_t endpoint_id = 0;
  std::string node_name;  ///< The participant (node) that owns it; empty for another host's.
  std::int32_t pid = 0;   ///< Its process; 0 for another host's.
  /// Empty: this host. Otherwise the host it is on (UDP discovery announced it;
  /// its node name and pid are not announced).
  std::string host;
  friend bool operator==(const GraphEndpoint&, const GraphEndpoint&) = default;
};

/// What a transport tells of the domain's graph: who publishes and who
/// subscribes each topic (docs/design/graph-events.md). Thread safety: any
/// thread.
class GraphSource {
 public:
  virtual ~GraphSource() = default;
  /// A futex word whose sequence moves (release, then a wake of its
  /// waiters) whenever an endpoint of any topic of the domain appears or
  /// leaves, a dead process's included: sleep on it, then take a snapshot.
  [[nodiscard]] virtual WakeWord& graph_word() noexcept = 0;
  /// Replaces `out` with the endpoints of `topic` now. False (an outcome,
  /// `out` untouched) when the graph cannot be read right now without
  /// waiting behind another process (retry soon); an error when it can never
  /// be read (damaged registry). Slow path: allocates.
  virtual Result<bool> try_snapshot(std::string_view topic, std::vector<GraphEndpoint>& out) = 0;
};

/// What the chunks of one class a publisher of the node holds.
struct PoolTopicShare {
  std::string topic;
  std::uint32_t reserved_chunks = 0;  ///< Kept for this publisher alone (PublisherQos::reserved_chunks).
  std::uint32_t chunks_in_use = 0;    ///< Loaned, queued, taken or kept for late joiners now.
};

/// Statistics of one chunk class of a node's pool.
struct PoolClassStats {
  std::uint32_t payload_bytes = 0;
  std::uint32_t total_chunks = 0;
  std::uint32_t free_chunks = 0;       ///< Free for any publisher (reserved chunks are not).
  std::uint32_t reserved_chunks = 0;   ///< Reserved by publishers, in use or not.
  std::vector<PoolTopicShare> topics;  ///< One entry per publisher that reserves or holds chunks of the class.
};

/// A transport: creates ports for topics.
class Transport {
 public:
  virtual ~Transport() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  virtual Result<std::shared_ptr<PublisherPort>> advertise(const TopicDescriptor& topic, const PublisherQos& qos) = 0;
  virtual Result<std::shared_ptr<SubscriberPort>> subscribe(const TopicDescriptor& topic, const SubscriberQos& qos) = 0;
  /// Chunk classes of this process's pool (empty for a transport without one).
  [[nodiscard]] virtual std::vector<PoolClassStats> pool_stats() const = 0;
  /// The domain's graph (nullptr: this transport does not tell it).
  [[nodiscard]] virtual GraphSource* graph() noexcept { return nullptr; }
  /// `topic` as this host's domain records it, with its schema; kNotFound
  /// when no endpoint of this host has it (kRequirementNotMet: this
  /// transport keeps no record). Slow path: takes the domain lock, reads a
  /// file, allocates.
  virtual Result<TopicRecord> find_topic(std::string_view topic) {
    return Error(ErrorCode::kRequirementNotMet,
                 "topic '" + std::string(topic) + "': this transport keeps no record of topics");
  }
};

}  // namespace axon
