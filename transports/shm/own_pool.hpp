// This node's pool as its owner sees it: the publisher blocks it hands to
// its publishers, the busy flag that keeps one thread at a time pushing to a
// block, and the reclaim of what departed subscribers and retired
// publishers left in it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "axon/transport.hpp"
#include "src/base/spin_flag.hpp"
#include "transports/shm/domain.hpp"
#include "transports/shm/mapped_pool.hpp"

namespace axon::shm {

/// One flag per publisher block of our pool, process-local because only
/// this process pushes to and reclaims its blocks: held by the publisher's
/// thread while it pushes or reclaims (loan()'s slow path, publish()), and
/// by the service thread while it reclaims or adopts joiners for an idle
/// publisher. Whoever holds it is the only one pushing to the block.
struct alignas(kCacheLine) BlockBusy {
  SpinFlag flag;
  /// Rejections counted by connections the service thread reclaimed for
  /// the block's publisher (added to its counters().rejected_by_subscribers).
  std::atomic<std::uint64_t> rejected_reclaimed{0};
};

/// No block: never a valid index (a pool has at most kMaxPublishersPerNode).
inline constexpr std::uint32_t kNoBlock = kMaxPublishersPerNode;

/// Thread safety: busy() and stats() from any thread; the reclaims from the
/// service thread (the ones that take a guard under the domain lock).
class OwnPool {
 public:
  /// Allocates one flag and one name per block of `pool`.
  OwnPool(Domain& domain, std::shared_ptr<MappedPool> pool)
      : domain_(domain),
        pool_(std::move(pool)),
        busy_(std::make_unique<BlockBusy[]>(pool_->block_count())),
        topics_(pool_->block_count()) {}
  OwnPool(const OwnPool&) = delete;
  OwnPool& operator=(const OwnPool&) = delete;

  [[nodiscard]] const std::shared_ptr<MappedPool>& pool() const noexcept { return pool_; }
  [[nodiscard]] BlockBusy& busy(std::uint32_t block) noexcept { return busy_[block]; }
  /// A free publisher block, or kNoBlock when all pool.publishers are in use.
  [[nodiscard]] std::uint32_t free_block(const DomainLockGuard& held) const noexcept;
  /// Free, reserved and total chunks per class, and what each publisher of
  /// the node holds of it (by topic). Allocates.
  [[nodiscard]] std::vector<PoolClassStats> stats() const;

  /// Names the publisher of `block` (its topic and its reservation) for
  /// stats() and exhausted-messages; forget_block() when it is destroyed.
  /// Any thread; takes a process-local mutex (never on the data path).
  void name_block(std::uint32_t block, std::string topic, std::uint32_t reserved_class, std::uint32_t reserved);
  void forget_block(std::uint32_t block);
  /// What the publishers of the node hold of class `size_class`, except the
  /// one of `except_block` (kNoBlock: none), as "'topic' 3 (2
  /// reserved), ...". Allocates; for explain_exhausted().
  [[nodiscard]] std::string holders_text(std::uint32_t size_class, std::uint32_t except_block) const;

  /// Moves active connections whose subscriber left the registry (or whose
  /// subscriber slot is corrupt) to kClosing, for their publisher to reclaim.
  void close_connections_of_gone_subscribers(const DomainLockGuard& held) noexcept;
  /// Reclaims the connections of retired publisher blocks and frees the
  /// blocks once every connection is reclaimed.
  void reclaim_retired_blocks(const DomainLockGuard& held) noexcept;
  /// Reclaims kClosing connections of active blocks whose publisher is idle
  /// (its busy flag is free), so a dead subscriber's chunks come back without
  /// another publish, and announces the room on each such block's topic as
  /// the publisher does after a reclaim of its own.
  void reclaim_closing_of_idle_publishers(const DomainLockGuard& held) noexcept;

 private:
  /// Connections of block `b` were reclaimed: subscribers of its topic that
  /// could not connect for lack of room rescan when they next look, and the
  /// sleeping ones wake (ShmPublisherPort::announce_room()).
  void announce_room(const DomainLockGuard& held, std::uint32_t b) noexcept;
  /// The registry entry of block `b`'s publisher, or null when the entry at
  /// the block's slot is not it (gone, reused, out of range).
  [[nodiscard]] const EndpointEntry* publisher_entry_of(const DomainLockGuard& held, std::uint32_t b) const noexcept;
  /// The chunks of class `size_class` each named block (but `except_block`)
  /// holds now, and its reservation.
  [[nodiscard]] std::vector<PoolTopicShare> shares(std::uint32_t size_class,
                                                   std::uint32_t except_block = kNoBlock) const;

  /// Process-local: who publishes through each block (name_block()).
  struct BlockTopic {
    std::string topic;  ///< Empty: the block has no publisher of this process.
    std::uint32_t reserved_class = 0;
    std::uint32_t reserved = 0;
  };

  Domain& domain_;
  std::shared_ptr<MappedPool> pool_;
  std::unique_ptr<BlockBusy[]> busy_;  ///< One per block (pool_->block_count()).
  mutable std::mutex topics_mutex_;    ///< Guards topics_ (slow paths only).
  std::vector<BlockTopic> topics_;     ///< One per block.
};

}  // namespace axon::shm
