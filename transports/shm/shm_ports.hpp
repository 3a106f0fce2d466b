// Publisher and subscriber ports of the shared-memory transport: the data
// path (loan, publish, take, release).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "axon/transport.hpp"
#include "transports/shm/chunk_reservation.hpp"
#include "transports/shm/domain.hpp"
#include "transports/shm/durable_publishers.hpp"
#include "transports/shm/endpoint_stats.hpp"
#include "transports/shm/latency_histogram.hpp"
#include "transports/shm/mapped_pool.hpp"
#include "transports/shm/own_pool.hpp"
#include "transports/shm/peer_pools.hpp"
#include "transports/shm/take_clock.hpp"

namespace axon::shm {

/// Thread safety: one thread at a time uses a publisher (loan, publish,
/// discard). Nothing here allocates, locks or makes a system call, except a
/// kBlockPublisher wait, which yields the CPU while a queue is full.
///
/// Chunk reuse: a published chunk keeps its loan bit and waits in a small
/// process-local FIFO; when only the loan bit is left (every subscriber let
/// go), the next loan() of that size takes it back directly. Subscribers
/// thus never touch the shared free lists, and chunks do not bounce between
/// the publisher's and the subscribers' caches through them.
class ShmPublisherPort final : public PublisherPort, public StatsSource {
 public:
  /// What a publisher uses of its node, and nothing more.
  struct NodeParts {
    std::shared_ptr<const void> owner;  ///< Keeps the node (and the parts below) alive.
    /// The lock and the registry (its entry, counters()), the wake words.
    Domain& domain;
    std::shared_ptr<MappedPool> pool;  ///< The node's own pool.
    BlockBusy& busy;                   ///< The flag of `block`.
    DurablePublishers& durable;        ///< Lists a transient-local publisher.
    OwnPool& own;                      ///< Who holds which chunks (stats, explain_exhausted()).
    EndpointStats& stats;              ///< The node's statistics segment (entry of `block`).
  };
  ShmPublisherPort(NodeParts node, std::uint32_t block, SlotRef registry_ref, std::uint32_t topic,
                   std::string topic_name, const PublisherQos& qos);
  ~ShmPublisherPort() override;
  ShmPublisherPort(const ShmPublisherPort&) = delete;
  ShmPublisherPort& operator=(const ShmPublisherPort&) = delete;

  /// Takes the chunks `qos` reserves (PublisherQos::reserved_chunks) of the
  /// class that holds `max_payload_bytes`, and names the publisher in the
  /// node's stats. Once, right after construction; allocates.
  Result<void> reserve(std::size_t max_payload_bytes, const PublisherQos& qos);

  LoanResult<LoanedChunk> loan(std::size_t payload_bytes) noexcept override;
  [[nodiscard]] std::string explain_exhausted() const override;
  PublishResult publish(LoanedChunk chunk, std::size_t payload_bytes, std::size_t payload_offset) noexcept override;
  void discard(LoanedChunk chunk) noexcept override;
  /// publish(), and the chunk stays valid (never reused) until `pins`
  /// unpin() calls: network writers read it (RDMA writes in flight to several
  /// hosts, UDP resends) after local subscribers let go. One kNetworkBit holds
  /// the chunk for all of them; the pins are counted in this process
  /// (pin_counts_). pins == 0 is publish().
  PublishResult publish_pinned(LoanedChunk chunk, std::size_t payload_bytes, std::size_t payload_offset,
                               std::uint32_t pins = 1) noexcept;
  /// Ends one pin of publish_pinned(); the last one drops kNetworkBit, which
  /// frees the chunk when no one else holds it. Any thread (a link's RDMA
  /// thread, the UDP writer's); never allocates.
  void unpin(void* handle) noexcept;
  /// Pins of publish_pinned() not unpinned yet on the chunk `handle` (tests,
  /// statistics).
  [[nodiscard]] std::uint32_t pins_of(const void* handle) const noexcept;
  /// The sequence publish() gave the last message (0: none yet).
  [[nodiscard]] std::uint64_t last_sequence() const noexcept { return sequence_; }
  [[nodiscard]] std::uint64_t publisher_id() const noexcept { return publisher_id_; }
  [[nodiscard]] std::uint32_t subscriber_count() const noexcept override;
  [[nodiscard]] std::size_t subscriber_fill(std::span<SubscriberFill> out) const noexcept override;
  [[nodiscard]] PublisherCounters counters() const noexcept override;
  void on_backpressure(std::function<void(const BackpressureEvent&)> handler) override;
  [[nodiscard]] std::string_view topic_name() const noexcept override { return topic_name_; }

  /// Copies the connections' quarantines, high water, rejections and fill
  /// into the statistics entry (the service thread, once a second).
  void refresh_stats() noexcept override;

  /// Transient-local publishers: hands the history to subscribers that joined
  /// since the last publish, unless publish() is running (then it does).
  /// Called by the node's service thread.
  void adopt_joiners_if_idle() noexcept;

 private:
  /// Where one message went in publish().
  struct Delivery {
    RingEntry entry;
    std::int64_t now_ns = 0;
    ConnectionSet delivered;      ///< Bits whose queue got the message.
    ConnectionSet not_delivered;  ///< Bits that did not (their hold is dropped).
    ConnectionSet waiting;        ///< Blocking bits still full after the first pass.
  };
  /// A message kept for late joiners.
  struct Kept {
    ChunkHeader* chunk = nullptr;
    RingEntry entry;
  };

  PublishResult publish_with(LoanedChunk chunk, std::size_t payload_bytes, std::size_t payload_offset,
                             std::uint32_t pins) noexcept;
  [[nodiscard]] Connection& connection(std::uint32_t bit) const noexcept;
  void offer(std::uint32_t bit, Delivery& delivery, PublishStatus& status) noexcept;
  void evict_and_push(Connection& conn, HolderBit bit, Delivery& delivery, PublishStatus& status) noexcept;
  void delivered(Connection& conn, HolderBit bit, Delivery& delivery, PublishStatus& status) noexcept;
  void wait_for_room(Delivery& delivery, PublishStatus& status) noexcept;
  /// Drops the holds of the connections that did not get `chunk`, and
  /// reclaims those of them that are closing.
  void release_undelivered(ChunkHeader* chunk, const ConnectionSet& not_delivered) noexcept;
  void quarantine(Connection& conn) noexcept;
  void wake(const ConnectionSet& delivered) noexcept;
  void count(const PublishStatus& status, std::size_t payload_bytes) noexcept;
  std::uint64_t remember(ChunkHeader* chunk, const RingEntry& entry) noexcept;
  void adopt_joiners() noexcept;
  static std::uint64_t subscriber_id(const Connection& conn) noexcept;
  static QueueCounters queue_counters(const Connection& conn) noexcept;
  // Single-writer statistics (relaxed load + store, no read-modify-write).
  static void bump(std::atomic<std::uint64_t>& counter) noexcept { add(counter, 1); }
  static void add(std::atomic<std::uint64_t>& counter, std::uint64_t n) noexcept {
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void reclaim_closing() noexcept;
  /// After reclaiming connections in publish(): wakes the topic's subscribers
  /// so that one waiting for room connects (try_lock only; a slow path).
  void announce_room() noexcept;
  /// Subscribers of the topic without an active connection of this block
  /// (tries the domain lock, never waits for it; counters() only).
  [[nodiscard]] std::uint32_t unconnected_subscribers() const noexcept;
  /// The last count unconnected_subscribers() made (relaxed: a statistic).
  mutable std::atomic<std::uint32_t> last_unconnected_{0};
  ChunkHeader* reuse_cached(std::size_t payload_bytes) noexcept;
  /// Who holds the chunks a loan of `payload_bytes` could have used
  /// (explain_exhausted(); formats, so never on the loan path).
  [[nodiscard]] std::string exhausted(std::size_t payload_bytes, std::uint32_t were_cached) const;
  /// The last loan that found no chunk, for explain_exhausted().
  struct LastExhausted {
    std::size_t payload_bytes = 0;  ///< 0: no loan came back exhausted yet.
    std::uint32_t were_cached = 0;  ///< Chunks the reuse cache gave back then.
    bool reservation_only = false;  ///< BeyondReservation::kRefuse refused it.
  } last_exhausted_;
  /// The message for a loan refused because every reserved chunk is in use.
  [[nodiscard]] std::string reservation_exhausted(std::size_t payload_bytes) const;
  /// Parks `chunk` in the reservation when it is reserved, else caches it
  /// (or drops the loan bit when `keep` is false: a history or pin holds it).
  void put_back(ChunkHeader* chunk, bool keep) noexcept;
  void cache(ChunkHeader* chunk) noexcept;
  void uncache_oldest() noexcept;

  static constexpr std::uint32_t kCacheSlots = 64;

  std::shared_ptr<const void> owner_;  ///< Keeps the node alive: the references below are its parts.
  std::shared_ptr<MappedPool> pool_;
  PublisherBlock* block_;
  std::uint32_t block_index_;
  SlotRef registry_ref_;
  std::uint64_t publisher_id_;
  std::uint32_t topic_;
  std::string topic_name_;
  ChunkFallback fallback_;  ///< The node's NodeOptions::chunk_fallback.
  std::uint64_t sequence_ = 0;
  /// Pins of publish_pinned() left on each chunk of the pool (index
  /// ChunkHeader::chunk_index; allocated by the constructor, one word per
  /// chunk, never resized). Nonzero only while kNetworkBit is ours on that
  /// chunk: publish_with() stores the count before any unpinner can know the
  /// chunk, each unpin() decrements it (acq_rel) and the one that reaches 0
  /// drops the bit.
  std::unique_ptr<std::atomic<std::uint32_t>[]> pin_counts_;
  std::array<ChunkHeader*, kCacheSlots> cache_{};  ///< FIFO of published chunks we still hold.
  std::uint32_t cache_head_ = 0;                   ///< Oldest entry.
  std::uint32_t cache_count_ = 0;
  /// Chunks of each class in the cache: at most an eighth of a class, so one
  /// publisher never hoards what the node's other publishers need.
  std::array<std::uint32_t, kMaxSizeClasses> cached_per_class_{};
  /// Chunks kept for this publisher alone (PublisherQos::reserved_chunks).
  ChunkReservation reservation_;
  BeyondReservation beyond_reservation_ = BeyondReservation::kShared;

  std::uint32_t high_water_percent_ = 75;
  std::function<void(const BackpressureEvent&)> backpressure_;
  /// The node's statistics segment, and this publisher's entry in it: the
  /// one place published and the totals are counted (counters() reads them
  /// back), written by publish() alone.
  EndpointStats& stats_;
  PublisherStats& entry_;
  struct Totals {
    /// Rejections of the subscribers of connections already reclaimed.
    std::atomic<std::uint64_t> rejected_reclaimed{0};
  } totals_;

  // Transient-local history (history_depth_ > 0): the last messages, oldest
  // at history_head_, each holding kHistoryBit on its chunk.
  std::uint32_t history_depth_ = 0;
  std::uint32_t history_head_ = 0;
  std::uint32_t history_count_ = 0;
  std::array<Kept, kMaxDurabilityDepth> history_{};
  /// This block's flag in the node's OwnPool: held by publish() and
  /// loan()'s reclaim, or by the service thread while it adopts joiners or
  /// reclaims closing connections of an idle publisher, so that one thread
  /// at a time pushes to the block's rings and reclaims its connections.
  BlockBusy& busy_;
  /// The lock and the registry (our entry, counters()), the subscribers' wake words.
  Domain& domain_;
  DurablePublishers& durable_;
  OwnPool& own_;
};

/// Thread safety: take() from one thread at a time; release() from any.
/// take() rescans the registry (a slow path with system calls) only when the
/// topic's publishers changed. Reads from at most the domain's
/// limits.publishers_per_topic publishers: its link table, allocated once
/// when it is created.
class ShmSubscriberPort final : public SubscriberPort, public StatsSource {
 public:
  /// What a subscriber uses of its node, and nothing more.
  struct NodeParts {
    std::shared_ptr<const void> owner;  ///< Keeps the node (and the parts below) alive.
    Domain& domain;                     ///< The lock and the registry, the topic version.
    PeerPoolsForPorts peers;            ///< The publishers' pools.
    EndpointStats& stats;               ///< The node's statistics segment.
  };
  /// `stats_slot`: its entry in the node's statistics segment, reserved
  /// (EndpointStats::reserve_subscriber()); the port opens and frees it.
  ShmSubscriberPort(NodeParts node, SlotRef registry_ref, std::uint32_t topic, std::string topic_name,
                    const SubscriberQos& qos, std::uint32_t stats_slot);
  ~ShmSubscriberPort() override;
  ShmSubscriberPort(const ShmSubscriberPort&) = delete;
  ShmSubscriberPort& operator=(const ShmSubscriberPort&) = delete;

  TakeResult<ReceivedChunk> take() noexcept override;
  void release(const ReceivedChunk& chunk) noexcept override;
  void reject(const ReceivedChunk& chunk, std::string_view reason) noexcept override;
  [[nodiscard]] SubscriberCounters counters() const noexcept override;
  [[nodiscard]] std::uint64_t publishers_lost() const noexcept override {
    return publishers_lost_.load(std::memory_order_relaxed);  // a statistic
  }
  [[nodiscard]] std::uint32_t publisher_count() noexcept override;
  [[nodiscard]] bool has_data() noexcept override;
  [[nodiscard]] WakeWord* wake_word() noexcept override;

  /// Connects to publishers that appeared, marks vanished ones, adopts
  /// connections to us in pools retained for publishers that are gone. Asks
  /// the service thread for pools not mapped yet (see missing_pools()); never
  /// calls another process.
  void rescan(const DomainLockGuard& held) noexcept;
  /// rescan(held) once the domain lock is taken (retried later when it cannot
  /// be). The taking thread (or subscribe() before the port is handed out).
  void rescan() noexcept;
  /// The last rescan met a live publisher whose pool is still being fetched.
  [[nodiscard]] bool missing_pools() const noexcept { return missing_pools_; }
  /// Copies the queue counters and fill of its connections into the
  /// statistics entry (the service thread, once a second; takes the links
  /// mutex, which take() never does).
  void refresh_stats() noexcept override;

 private:
  /// The subscriber's end of one connection. Stable address: samples refer
  /// to it by index while other links come and go.
  struct Link {
    std::shared_ptr<MappedPool> pool;  ///< Keeps the publisher's pool mapped.
    Connection* conn = nullptr;
    RingSlots<RingEntry> slots;  ///< The pool's queue slots (its local, checked view).
    HolderBit bit;               ///< The connection's bit in the chunks' holder ledger.
    std::uint64_t publisher_id = 0;
    SlotRef publisher;
    bool orphaned = false;   ///< The publisher is gone: drain, then close.
    bool evictable = false;  ///< The publisher may evict: pop by compare-exchange.
    bool seen = false;       ///< rescan()'s scratch: found registered (or retained) this round.
    /// Samples taken from this link (taking thread only) and given back (any
    /// thread): held = taken - released, with no read-modify-write on take.
    std::uint64_t taken = 0;
    std::atomic<std::uint64_t> released{0};
    /// The next message of this link whose take is measured is the first
    /// published from then on (kLatencyMeasureGapNs; taking thread only).
    std::int64_t measure_from_ns = 0;
    [[nodiscard]] std::uint64_t held() const noexcept {
      // Acquire pairs with the release increment in release(): the sample's
      // last use of the pool happens before the link may be closed or reused.
      return taken - released.load(std::memory_order_acquire);
    }
  };
  static_assert(sizeof(Link) == 104, "update the link's cost in shm_constants.hpp and docs/configuration.md");

  /// take() and has_data(): rescan when the topic's publishers changed, the
  /// node mapped a peer pool, or a failed lock is due for a retry. Two loads
  /// in steady state, no system call.
  void rescan_if_publishers_changed() noexcept;
  /// link()'s answer when every slot is in use.
  static constexpr std::uint32_t kNoLink = ~std::uint32_t{0};
  /// Links `conn` of `pool` (publisher `pub_ref`); the link's slot, or
  /// kNoLink when every slot is in use (the connection is closed then).
  std::uint32_t link(std::shared_ptr<MappedPool> pool, Connection* conn, SlotRef pub_ref, bool orphaned) noexcept;
  static void accumulate(QueueCounters& sum, const Connection& conn) noexcept;
  /// Sets a link's `orphaned` (taking thread), under the links mutex when it changes.
  void set_orphaned(Link& link, bool orphaned) noexcept;
  void close_drained_orphans() noexcept;
  void close_link(Link& link) noexcept;

  /// Links `pub` (a live publisher entry of `registry`); false when the
  /// link could not be made (counted as unconnected).
  bool link_publisher(const DomainLockGuard& held, std::uint32_t slot, const EndpointEntry& pub) noexcept;
  /// Links connections to us in pools the node retained.
  void adopt_retained(const DomainLockGuard& held, const Registry& registry) noexcept;

  std::shared_ptr<const void> owner_;  ///< Keeps the node alive: the references below are its parts.
  Domain& domain_;
  PeerPoolsForPorts peers_;
  SlotRef registry_ref_;
  std::uint32_t topic_;
  std::string topic_name_;
  SubscriberQos qos_;
  std::uint64_t seen_version_ = ~std::uint64_t{0};
  std::int64_t retry_at_ns_ = 0;         ///< A failed lock is retried from then on.
  std::uint64_t seen_pools_mapped_ = 0;  ///< PeerPools::pools_mapped() at the last rescan.
  bool missing_pools_ = false;
  std::uint32_t next_link_ = 0;
  std::uint32_t link_count_ = 0;  ///< Links [0, link_count_) may be in use.
  // Written by the taking thread only (plain stores); read by anyone.
  std::atomic<std::uint64_t> taken_{0};
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> rejected_taken_{0};  ///< Taken, then rejected by the serializer.
  std::atomic<std::uint64_t> released_{0};        ///< Incremented by release() on any thread.
  std::atomic<std::uint64_t> publishers_lost_{0};
  /// Publishers the last rescan could not connect to (retried; a statistic).
  std::atomic<std::uint32_t> publishers_unconnected_{0};
  /// Guards link (dis)connection and a link's `orphaned` against counters()
  /// and refresh_stats() on other threads; the data path (take, release)
  /// never takes it.
  mutable std::mutex links_mutex_;
  QueueCounters closed_links_;  ///< Counters of links closed so far.
  /// The domain's limits.publishers_per_topic: links_ has this many.
  std::uint32_t max_links_;
  /// Allocated once by the constructor, never resized: take() and release()
  /// index it without allocating or locking.
  std::unique_ptr<Link[]> links_;
  /// The node's statistics segment and this subscriber's entry: taken,
  /// rejected and publishers_lost are stored there by the taking thread, the
  /// latency of each take is recorded in its windows.
  EndpointStats& stats_;
  std::uint32_t stats_slot_;
  SubscriberStats& entry_;
  LatencyRecorder latency_;
  TakeClock clock_;  ///< The taking thread's; stamps the latencies.
};

}  // namespace axon::shm
