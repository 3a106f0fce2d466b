#include "transports/shm/liveness.hpp"

namespace axon::shm {

void liveness_round(const DomainLockGuard& held, Domain& domain, OwnPool& own) noexcept {
  // A damaged registry looks empty: trusting it would close every
  // connection and silently stop the data. Our own pool is still ours.
  if (domain.registry_intact(held)) {
    domain.reclaim_dead_participants(held);
    own.close_connections_of_gone_subscribers(held);
  }
  own.reclaim_closing_of_idle_publishers();
  own.reclaim_retired_blocks(held);
}

}  // namespace axon::shm
