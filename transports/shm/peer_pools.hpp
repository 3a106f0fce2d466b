// The pools of other participants: fetched by the service thread without
// blocking, deposited by publishers that connected our subscribers, kept
// mapped while a subscriber of this node still has something to read from
// them; and our own pool handed to the nodes of the subscribers we connect.
// Nothing here calls another process while holding the domain lock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transports/shm/domain.hpp"
#include "transports/shm/fd_channel.hpp"
#include "transports/shm/mapped_pool.hpp"
#include "transports/shm/pool_fetcher.hpp"
#include "transports/shm/service_wake.hpp"

namespace axon::shm {

/// Thread safety: mapped_pool(), retained_pools(), pools_mapped() and the
/// fetch waits from any thread; adopt(), prune(), run_fetches() and the
/// polling calls from the service thread only.
class PeerPools {
 public:
  /// `own`: this node's pool (mapped_pool() of ourselves, deposits).
  PeerPools(Domain& domain, std::shared_ptr<MappedPool> own, const ServiceWake& wake)
      : domain_(domain), own_(std::move(own)), wake_(wake) {}
  PeerPools(const PeerPools&) = delete;
  PeerPools& operator=(const PeerPools&) = delete;

  /// The pool of `owner` if this process has it mapped, else nullptr, and
  /// with `fetch` the service thread is asked to fetch it. Any thread; no
  /// system call but an eventfd write.
  std::shared_ptr<MappedPool> mapped_pool(SlotRef owner, bool fetch);
  /// Pools kept mapped for this node's subscribers (see retained_).
  std::vector<std::shared_ptr<MappedPool>> retained_pools();
  /// Moves when a peer pool is mapped; take() compares it (acquire).
  [[nodiscard]] std::uint64_t pools_mapped() const noexcept {
    // Acquire pairs with the release increment in adopt(): a port that
    // sees the new count finds the pool in peers_ / retained_.
    return pools_mapped_.load(std::memory_order_acquire);
  }
  /// Waits until the service thread ended a fetch or mapped a pool since
  /// `seen_events`, or until `deadline_ns`. Returns the current event count.
  std::uint64_t wait_for_fetch(std::uint64_t seen_events, std::int64_t deadline_ns);
  [[nodiscard]] std::uint64_t fetch_events();

  /// Hands our pool's descriptor to each of `participants`' sockets, so
  /// that what we queue for their subscribers outlives us. Not under the
  /// domain lock; never blocks.
  void deposit_own_pool(const std::vector<SlotRef>& participants) noexcept;

  // The service thread.
  /// A fetched or deposited descriptor of `owner`'s pool. False when it
  /// could not be mapped (logged).
  bool adopt(const Deposit& received, std::int64_t now_ns, const char* how) noexcept;
  /// Advances the fetches; adopts what arrived, retries what did not map.
  void run_fetches(std::int64_t now_ns) noexcept;
  /// Lets go of retained pools no subscriber of this node waits for, and of
  /// fetches of departed peers.
  void prune(const DomainLockGuard& held, std::int64_t now_ns) noexcept;
  void poll_fds(std::vector<int>& fds) const { fetcher_.poll_fds(fds); }
  [[nodiscard]] std::int64_t next_deadline_ns() const noexcept { return fetcher_.next_deadline_ns(); }

 private:
  void count_fetch_event() noexcept;

  Domain& domain_;
  std::shared_ptr<MappedPool> own_;
  const ServiceWake& wake_;

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
  PoolFetcher fetcher_;           ///< want() from any thread, the rest on the service thread.
  std::vector<Deposit> fetched_;  ///< run_fetches()'s buffer (service thread).
  static constexpr std::int64_t kRetainFetchedNs = 1'000'000'000;

  std::mutex fetch_mutex_;  ///< Guards fetch_events_ for fetch_cv_.
  std::condition_variable fetch_cv_;
  std::uint64_t fetch_events_ = 0;
  /// Peer pools mapped so far, on its own line: take() reads it.
  alignas(64) std::atomic<std::uint64_t> pools_mapped_{0};
};

/// What a port may use of its node's PeerPools, and nothing more: the
/// service thread's calls (adopt(), prune(), run_fetches(), polling) and the
/// node's own (deposits, fetch waits) are not here. Forwards inline.
/// Thread safety: as those calls of PeerPools (any thread).
class PeerPoolsForPorts {
 public:
  explicit PeerPoolsForPorts(PeerPools& pools) noexcept : pools_(pools) {}

  /// PeerPools::mapped_pool().
  std::shared_ptr<MappedPool> mapped_pool(SlotRef owner, bool fetch) { return pools_.mapped_pool(owner, fetch); }
  /// PeerPools::retained_pools().
  std::vector<std::shared_ptr<MappedPool>> retained_pools() { return pools_.retained_pools(); }
  /// PeerPools::pools_mapped().
  [[nodiscard]] std::uint64_t pools_mapped() const noexcept { return pools_.pools_mapped(); }

 private:
  PeerPools& pools_;
};

}  // namespace axon::shm
