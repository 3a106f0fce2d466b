#include "transports/shm/peer_pools.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "src/base/clock.hpp"
#include "src/base/log.hpp"

namespace axon::shm {

std::shared_ptr<MappedPool> PeerPools::mapped_pool(SlotRef owner, bool fetch) {
  if (owner == domain_.self()) {
    return own_;
  }
  if (auto pool = local_pool(domain_.config(), domain_.incarnation(), owner)) {
    return pool;
  }
  {
    std::lock_guard<std::mutex> peers_guard(peers_mutex_);
    if (auto it = peers_.find(pool_key(owner)); it != peers_.end()) {
      if (auto pool = it->second.lock()) {
        return pool;
      }
    }
  }
  if (fetch) {
    fetcher_.want(owner, domain_.socket_path(owner.slot, owner.generation));
    wake_.wake();
  }
  return nullptr;
}

bool PeerPools::adopt(const Deposit& received, std::int64_t now_ns, const char* how) noexcept {
  const SlotRef owner{received.participant, received.generation};
  std::shared_ptr<MappedPool> pool = mapped_pool(owner, false);
  if (pool != nullptr) {
    ::close(received.fd);  // mapped already: one mapping per pool and process
  } else {
    auto mapped = map_peer_pool(domain_.config(), owner, received.fd,
                                fmt::format("{} ({})", domain_.socket_path(owner.slot, owner.generation), how));
    if (!mapped) {
      logger().warn("cannot map the {} pool of participant {}: {}; its publishers' messages are not received", how,
                    owner.slot, mapped.error().message());
      return false;
    }
    pool = std::move(*mapped);
  }
  {
    std::lock_guard<std::mutex> peers_guard(peers_mutex_);
    // Forget entries of pools nobody maps any more, then remember this one.
    std::erase_if(peers_, [](const auto& entry) { return entry.second.expired(); });
    peers_[pool_key(owner)] = pool;
    auto it = std::ranges::find_if(retained_, [&](const Retained& r) { return r.pool == pool; });
    if (it == retained_.end()) {
      retained_.push_back({.pool = pool, .keep_until_ns = now_ns + kRetainFetchedNs});
    } else {
      it->keep_until_ns = now_ns + kRetainFetchedNs;
    }
  }
  // Release pairs with the acquire in pools_mapped(): a port that sees the
  // new count finds the pool in peers_ and retained_.
  pools_mapped_.fetch_add(1, std::memory_order_release);
  count_fetch_event();
  return true;
}

void PeerPools::count_fetch_event() noexcept {
  std::lock_guard<std::mutex> fetch_guard(fetch_mutex_);
  ++fetch_events_;
  fetch_cv_.notify_all();
}

void PeerPools::run_fetches(std::int64_t now_ns) noexcept {
  fetched_.clear();
  const bool ended = fetcher_.run(now_ns, fetched_);
  for (const Deposit& fetched : fetched_) {
    if (!adopt(fetched, now_ns, "fetched")) {
      // E.g. lock_memory over RLIMIT_MEMLOCK: try again later, not in a loop.
      const SlotRef owner{fetched.participant, fetched.generation};
      fetcher_.want(owner, domain_.socket_path(owner.slot, owner.generation), now_ns + PoolFetcher::kMaxBackoffNs);
    }
  }
  if (ended && fetched_.empty()) {
    count_fetch_event();  // a fetch failed: subscribe() stops waiting for it
  }
}

void PeerPools::prune(const DomainLockGuard& held, std::int64_t now_ns) noexcept {
  // A damaged registry looks empty: judging by it would drop what our
  // subscribers still need.
  if (!domain_.registry_intact(held)) {
    return;
  }
  const Registry& registry = domain_.registry(held);
  const SlotRef self = domain_.self();
  fetcher_.forget_if([&](SlotRef owner) { return !registry.participant_is(held, owner); });
  // A retained pool stays while one of its connections is active and
  // addressed to a live subscriber of this node: that subscriber may still
  // link it (and read what was queued) even if the owner is gone.
  auto waited_for = [&](const MappedPool& pool) {
    for (std::uint32_t c = 0; c < pool.connection_count(); ++c) {
      const Connection& conn = pool.connection(c);
      // Acquire pairs with the creator's release store of kActive.
      if (conn.state.load(std::memory_order_acquire) != ConnectionState::kActive) {
        continue;
      }
      // Written by another process: check before using it as an index.
      if (conn.subscriber_slot >= registry.limits().subscribers) {
        continue;
      }
      const EndpointEntry& sub = registry.subscriber(held, conn.subscriber_slot);
      if (registry.subscriber_is(held, {conn.subscriber_slot, conn.subscriber_generation}) &&
          sub.participant == self.slot && sub.participant_generation == self.generation) {
        return true;
      }
    }
    return false;
  };
  std::vector<std::shared_ptr<MappedPool>> released;  // unmapped after the mutex
  {
    std::lock_guard<std::mutex> peers_guard(peers_mutex_);
    std::erase_if(retained_, [&](Retained& r) {
      if (now_ns < r.keep_until_ns || waited_for(*r.pool)) {
        return false;
      }
      released.push_back(std::move(r.pool));
      return true;
    });
  }
}

std::vector<std::shared_ptr<MappedPool>> PeerPools::retained_pools() {
  std::vector<std::shared_ptr<MappedPool>> pools;
  std::lock_guard<std::mutex> peers_guard(peers_mutex_);
  for (const Retained& r : retained_) {
    pools.push_back(r.pool);
  }
  return pools;
}

void PeerPools::deposit_own_pool(const std::vector<SlotRef>& participants) noexcept {
  for (const SlotRef& node : participants) {
    // Non-blocking: a stopped receiver's socket queues the descriptor (and
    // keeps the memfd alive); a full backlog loses only this guarantee.
    if (auto ok = deposit_fd(domain_.socket_path(node.slot, node.generation), own_->mapping.fd(), domain_.self().slot,
                             domain_.self().generation);
        !ok) {
      // Not silent: until that node maps our pool itself, what we queue for
      // its subscribers is lost if we exit first.
      logger().warn(
          "could not hand our pool to participant {} ({}); its subscribers fetch it at their next take(), and "
          "miss what we queue for them if this process exits before that",
          node.slot, ok.error().message());
    }
  }
}

std::uint64_t PeerPools::fetch_events() {
  std::lock_guard<std::mutex> fetch_guard(fetch_mutex_);
  return fetch_events_;
}

std::uint64_t PeerPools::wait_for_fetch(std::uint64_t seen_events, std::int64_t deadline_ns) {
  std::unique_lock<std::mutex> fetch_guard(fetch_mutex_);
  const std::int64_t left_ns = deadline_ns - monotonic_now_ns();
  if (left_ns > 0) {
    fetch_cv_.wait_for(fetch_guard, std::chrono::nanoseconds(left_ns), [&] { return fetch_events_ != seen_events; });
  }
  return fetch_events_;
}

}  // namespace axon::shm
