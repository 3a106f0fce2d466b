#include "transports/shm/liveness.hpp"

#include "transports/shm/connections.hpp"

namespace axon::shm {

void liveness_round(const DomainLockGuard& held, Domain& domain, OwnPool& own, PeerWatch* watch) noexcept {
  // A damaged registry looks empty: trusting it would close every
  // connection and silently stop the data. Our own pool is still ours.
  if (domain.registry_intact(held)) {
    domain.reclaim_dead_participants(held, watch);
    own.close_connections_of_gone_subscribers(held);
    if (watch != nullptr) {
      try {
        watch->sync(held, domain.registry(held));
      } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory: the next round syncs again
      }
    }
  }
  if (watch != nullptr) {
    // Handled, or (a damaged registry) nothing to be done: either way the
    // service thread must not run the round again at once, in a loop.
    watch->exits_handled();
  }
  own.reclaim_closing_of_idle_publishers(held);
  own.reclaim_retired_blocks(held);
}

bool reclaims_pending(const OwnPool& own) noexcept {
  const MappedPool& pool = *own.pool();
  for (std::uint32_t b = 0; b < pool.block_count(); ++b) {
    const PublisherBlock& block = pool.block(b);
    // Acquire pairs with the release stores of kRetired (the publisher's
    // destructor) and kActive (advertise()).
    const BlockState state = block.state.load(std::memory_order_acquire);
    if (state == BlockState::kRetired || (state == BlockState::kActive && has_closing_connection(pool, block))) {
      return true;
    }
  }
  return false;
}

}  // namespace axon::shm
