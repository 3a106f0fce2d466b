// The shared-memory transport: joins a domain (registry + lock), owns this
// participant's pool (memfd), serves its descriptor to peers, maps peers'
// pools, watches peers' liveness and reclaims what dead ones held.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "axon/options.hpp"
#include "axon/result.hpp"
#include "axon/transport.hpp"
#include "src/spin_flag.hpp"
#include "transports/shm/chunk_pool.hpp"
#include "transports/shm/domain_lock.hpp"
#include "transports/shm/fd_channel.hpp"
#include "transports/shm/mapping_guard.hpp"
#include "transports/shm/pool_fetcher.hpp"
#include "transports/shm/pool_segment.hpp"
#include "transports/shm/registry.hpp"
#include "transports/shm/segment.hpp"

namespace axon::shm {

struct ShmConfig {
  std::uint32_t domain_id = 0;
  std::string node_name;
  std::string shm_dir = "/dev/shm";
  mode_t file_mode = 0600;
  std::string group;
  std::vector<ChunkClassConfig> chunk_classes;
  /// How far this node's loans fall through to larger classes.
  ChunkFallback chunk_fallback;
  std::uint32_t liveness_period_ms = 50;
  /// NodeOptions::prefault_memory, lock_memory, huge_pages (memory_options.hpp).
  bool prefault_memory = false;
  bool lock_memory = false;
  bool huge_pages = false;
};

/// A mapped pool segment, ours or a peer's. Shared by every port that uses
/// it; unmapped when the last one lets go.
struct MappedPool {
  MappedSegment mapping;
  PoolSegment* segment = nullptr;
  ChunkPool pool;
  SlotRef owner;
  bool owner_is_local = false;  ///< Owned by a node of this process.
};

class ShmPublisherPort;
class ShmSubscriberPort;

/// Key of a participant's pool in ShmTransport::peers_.
inline std::uint64_t pool_key(SlotRef owner) noexcept { return (std::uint64_t{owner.slot} << 32) | owner.generation; }

/// Thread safety: advertise()/subscribe() from any thread. The internal
/// service thread serves descriptors and runs liveness checks.
class ShmTransport final : public Transport, public std::enable_shared_from_this<ShmTransport> {
 public:
  static Result<std::shared_ptr<ShmTransport>> create(ShmConfig config);
  ~ShmTransport() override;
  ShmTransport(const ShmTransport&) = delete;
  ShmTransport& operator=(const ShmTransport&) = delete;

  [[nodiscard]] std::string_view name() const noexcept override { return "shm"; }
  Result<std::shared_ptr<PublisherPort>> advertise(const TopicDescriptor& topic, const PublisherQos& qos) override;
  Result<std::shared_ptr<SubscriberPort>> subscribe(const TopicDescriptor& topic, const SubscriberQos& qos) override;

  /// Free and total chunks per class of this participant's pool.
  [[nodiscard]] std::vector<PoolClassStats> pool_stats() const override;
  [[nodiscard]] std::uint32_t domain_id() const noexcept { return config_.domain_id; }
  /// Runs one liveness round now (tests; normally the service thread does).
  void check_liveness_now();

 private:
  friend class ShmPublisherPort;
  friend class ShmSubscriberPort;

  explicit ShmTransport(ShmConfig config);
  Result<void> join();
  Result<void> open_or_create_registry();
  Result<void> create_registry();
  /// Makes `mapping` this node's registry: guards it against truncation.
  Result<void> adopt_registry(MappedSegment mapping);
  /// Replaces the damaged registry behind `fd` when no live participant
  /// holds it (flock); otherwise an error that says `what` and the fix.
  Result<void> replace_if_abandoned(int fd, const std::string& what);
  /// False (and one error logged) once the registry was truncated or
  /// overwritten while this node ran. The caller holds the domain lock.
  bool registry_intact_locked() noexcept;
  [[nodiscard]] Error damaged_registry_error(std::string_view topic) const;
  void remove_stale_files() const;
  Result<void> create_own_pool();
  void leave() noexcept;
  void service_loop() noexcept;
  void liveness_round() noexcept;  // caller holds the domain lock
  void reclaim_dead(std::uint32_t participant) noexcept;
  void close_connections_of_gone_subscribers() noexcept;
  void reclaim_retired_blocks() noexcept;
  /// Reclaims kClosing connections of active blocks whose publisher is idle
  /// (its busy flag is free), so a dead subscriber's chunks come back without
  /// another publish.
  void reclaim_closing_of_idle_publishers() noexcept;

  // Peer pools (peer_pools.cpp). Nothing here calls another process while
  // the domain lock is held: a pool that is not mapped yet is fetched by the
  // service thread, which bumps pools_mapped_ when it arrives.

  /// The pool of `owner` if this process has it mapped, else nullptr, and
  /// with `fetch` the service thread is asked to fetch it. Any thread; no
  /// system call but an eventfd write.
  std::shared_ptr<MappedPool> mapped_pool(SlotRef owner, bool fetch);
  /// Maps and checks the pool descriptor `fd` (ours to close) claimed to be
  /// `owner`'s. Any thread.
  Result<std::shared_ptr<MappedPool>> map_peer_pool(SlotRef owner, int fd, const std::string& from);
  /// Service thread: a fetched or deposited descriptor of `owner`'s pool.
  /// False when it could not be mapped (logged).
  bool adopt_pool(const Deposit& received, std::int64_t now_ns, const char* how) noexcept;
  /// Service thread, domain lock held: lets go of retained pools no
  /// subscriber of this node waits for, and of fetches of departed peers.
  void prune_peer_pools(std::int64_t now_ns) noexcept;
  /// Pools kept mapped for this node's subscribers (see retained_).
  std::vector<std::shared_ptr<MappedPool>> retained_pools();
  /// Hands our pool's descriptor to each of `participants`' sockets, so
  /// that what we queue for their subscribers outlives us. Not under the
  /// domain lock; never blocks.
  void deposit_own_pool(const std::vector<SlotRef>& participants) noexcept;
  /// Waits until the service thread ended a fetch or mapped a pool since
  /// `seen_events`, or until `deadline_ns`. Returns the current event count.
  std::uint64_t wait_for_fetch(std::uint64_t seen_events, std::int64_t deadline_ns);
  [[nodiscard]] std::uint64_t fetch_events();
  /// Moves when a peer pool is mapped; take() compares it (acquire).
  [[nodiscard]] std::uint64_t pools_mapped() const noexcept {
    // Acquire pairs with the release increment in adopt_pool(): a port that
    // sees the new count finds the pool in peers_ / retained_.
    return pools_mapped_.load(std::memory_order_acquire);
  }
  void wake_service() const noexcept;
  /// `hand_over_history`: a subscriber connects itself; a transient-local
  /// publisher then hands its history over before activating the connection.
  Result<Connection*> create_connection(MappedPool& pool, std::uint32_t block, SlotRef subscriber,
                                        bool hand_over_history);
  /// Lets transient-local publishers of this process adopt their joiners.
  void adopt_joiners() noexcept;
  void forget_durable(ShmPublisherPort* port) noexcept;

  [[nodiscard]] std::string registry_path() const;
  [[nodiscard]] std::string socket_path(std::uint32_t slot, std::uint32_t generation) const;

  ShmConfig config_;
  DomainLock lock_;
  MappedSegment registry_mapping_;
  /// Declared after the mapping: unregistered before it is unmapped.
  GuardedMapping registry_guard_;
  RegistrySegment* registry_segment_ = nullptr;
  std::uint64_t joined_incarnation_ = 0;  ///< The registry's incarnation when we joined.
  bool registry_damaged_ = false;         ///< Sticky; guarded by the domain lock.
  Registry registry_{nullptr};
  SlotRef self_;
  std::shared_ptr<MappedPool> own_pool_;
  FdServer fd_server_;
  gid_t group_gid_ = static_cast<gid_t>(-1);

  std::mutex durable_mutex_;  ///< Guards durable_publishers_.
  /// Transient-local publishers of this process; each removes itself in its
  /// destructor, which waits for a running adopt_joiners() to finish.
  std::vector<ShmPublisherPort*> durable_publishers_;
  std::atomic<std::uint32_t> durable_count_{0};  ///< Relaxed: only shortens the service period.
  static constexpr int kAdoptPeriodMs = 5;

  std::mutex peers_mutex_;  ///< Guards peers_ and retained_.
  std::map<std::uint64_t, std::weak_ptr<MappedPool>> peers_;
  /// Peer pools this node keeps mapped although no link uses them (yet): a
  /// fetched pool until `keep_until_ns` (its subscriber links it meanwhile),
  /// and any pool with an active connection to a subscriber of this node
  /// (a deposit, or a publisher that is gone: its queued messages stay
  /// readable). The service thread prunes it under the domain lock.
  struct Retained {
    std::shared_ptr<MappedPool> pool;
    std::int64_t keep_until_ns = 0;
  };
  std::vector<Retained> retained_;
  PoolFetcher fetcher_;  ///< want() from any thread, the rest on the service thread.
  static constexpr std::int64_t kRetainFetchedNs = 1'000'000'000;

  std::mutex fetch_mutex_;  ///< Guards fetch_events_ for fetch_cv_.
  std::condition_variable fetch_cv_;
  std::uint64_t fetch_events_ = 0;
  /// Peer pools mapped so far, on its own line: take() reads it.
  alignas(64) std::atomic<std::uint64_t> pools_mapped_{0};

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
  std::array<BlockBusy, kMaxPublishersPerNode> block_busy_{};

  int wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread service_;
};

/// Reclaims connection `bit` of `block` in `pool`: stops pushing to it, gives
/// back every chunk it held, frees it. Only the thread that pushes to the
/// block (its publisher, or the service thread once retired) may call it.
/// Returns the messages its subscriber rejected (Connection::rejected), for
/// the publisher's counters to keep.
std::uint64_t reclaim_connection(MappedPool& pool, std::uint32_t block, std::uint32_t bit) noexcept;

/// reclaim_connection() for every connection of `block` in state kClosing,
/// with the same rule on who may call it; returns the sum of what they return.
std::uint64_t reclaim_closing_connections(MappedPool& pool, std::uint32_t block) noexcept;

}  // namespace axon::shm
