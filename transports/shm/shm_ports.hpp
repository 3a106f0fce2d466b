// Publisher and subscriber ports of the shared-memory transport: the data
// path (loan, publish, take, release).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "axon/transport.hpp"
#include "transports/shm/shm_transport.hpp"

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
class ShmPublisherPort final : public PublisherPort {
 public:
  ShmPublisherPort(std::shared_ptr<ShmTransport> transport, std::shared_ptr<MappedPool> pool, std::uint32_t block,
                   SlotRef registry_ref, std::uint32_t topic, std::string topic_name);
  ~ShmPublisherPort() override;
  ShmPublisherPort(const ShmPublisherPort&) = delete;
  ShmPublisherPort& operator=(const ShmPublisherPort&) = delete;

  Result<LoanedChunk> loan(std::size_t payload_bytes) noexcept override;
  Result<PublishStatus> publish(LoanedChunk chunk, std::size_t payload_bytes,
                                std::size_t payload_offset) noexcept override;
  void discard(LoanedChunk chunk) noexcept override;
  [[nodiscard]] std::uint32_t subscriber_count() const noexcept override;

 private:
  bool push_blocking(Connection& conn, const RingEntry& entry) noexcept;
  void reclaim_closing() noexcept;
  ChunkHeader* reuse_cached(std::size_t payload_bytes) noexcept;
  void cache(ChunkHeader* chunk) noexcept;
  void uncache_oldest() noexcept;

  static constexpr std::uint32_t kCacheSlots = 64;

  std::shared_ptr<ShmTransport> transport_;
  std::shared_ptr<MappedPool> pool_;
  PublisherBlock* block_;
  std::uint32_t block_index_;
  SlotRef registry_ref_;
  std::uint64_t publisher_id_;
  std::uint32_t topic_;
  std::string topic_name_;
  std::uint64_t sequence_ = 0;
  std::array<ChunkHeader*, kCacheSlots> cache_{};  ///< FIFO of published chunks we still hold.
  std::uint32_t cache_head_ = 0;                   ///< Oldest entry.
  std::uint32_t cache_count_ = 0;
  /// Chunks of each class in the cache: at most an eighth of a class, so one
  /// publisher never hoards what the node's other publishers need.
  std::array<std::uint32_t, kMaxSizeClasses> cached_per_class_{};
};

/// Thread safety: take() from one thread at a time; release() from any.
/// take() rescans the registry (a slow path with system calls) only when the
/// topic's publishers changed.
class ShmSubscriberPort final : public SubscriberPort {
 public:
  static constexpr std::uint32_t kMaxLinks = 64;  ///< Publishers per subscriber.

  ShmSubscriberPort(std::shared_ptr<ShmTransport> transport, SlotRef registry_ref, std::uint32_t topic,
                    std::string topic_name, const SubscriberQos& qos);
  ~ShmSubscriberPort() override;
  ShmSubscriberPort(const ShmSubscriberPort&) = delete;
  ShmSubscriberPort& operator=(const ShmSubscriberPort&) = delete;

  Result<ReceivedChunk> take() noexcept override;
  void release(const ReceivedChunk& chunk) noexcept override;
  void reject(const ReceivedChunk& chunk, std::string_view reason) noexcept override;
  [[nodiscard]] SubscriberCounters counters() const noexcept override;
  [[nodiscard]] std::uint32_t publisher_count() noexcept override;

  /// Connects to publishers that appeared, marks vanished ones. The caller
  /// holds the domain lock.
  void rescan_locked() noexcept;

 private:
  /// The subscriber's end of one connection. Stable address: samples refer
  /// to it by index while other links come and go.
  struct Link {
    std::shared_ptr<MappedPool> pool;  ///< Keeps the publisher's pool mapped.
    Connection* conn = nullptr;
    std::uint64_t bit_mask = 0;
    std::uint64_t publisher_id = 0;
    SlotRef publisher;
    bool orphaned = false;  ///< The publisher is gone: drain, then close.
    /// Samples taken from this link (taking thread only) and given back (any
    /// thread): held = taken - released, with no read-modify-write on take.
    std::uint64_t taken = 0;
    std::atomic<std::uint64_t> released{0};
    [[nodiscard]] std::uint64_t held() const noexcept {
      // Acquire pairs with the release increment in release(): the sample's
      // last use of the pool happens before the link may be closed or reused.
      return taken - released.load(std::memory_order_acquire);
    }
  };

  void rescan() noexcept;
  void close_drained_orphans() noexcept;
  void close_link(Link& link) noexcept;

  std::shared_ptr<ShmTransport> transport_;
  SlotRef registry_ref_;
  std::uint32_t topic_;
  std::string topic_name_;
  SubscriberQos qos_;
  std::uint64_t seen_version_ = ~std::uint64_t{0};
  std::int64_t retry_at_ns_ = 0;  ///< A failed connect is retried from then on.
  std::uint32_t next_link_ = 0;
  std::uint32_t link_count_ = 0;  ///< Links [0, link_count_) may be in use.
  // Written by the taking thread only (plain stores); read by anyone.
  std::atomic<std::uint64_t> taken_{0};
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> rejected_taken_{0};  ///< Taken, then rejected by the serializer.
  std::atomic<std::uint64_t> released_{0};        ///< Incremented by release() on any thread.
  std::array<Link, kMaxLinks> links_;
};

}  // namespace axon::shm
