// The liveness round: what the node does each liveness period (or on
// check_liveness_now()) to notice departed peers and take back what they held.
#pragma once

#include "transports/shm/domain.hpp"
#include "transports/shm/own_pool.hpp"

namespace axon::shm {

/// Removes dead participants from the registry and closes the connections
/// of subscribers that left (both only while the registry is intact), then
/// reclaims what closing connections and retired publishers left in `own`.
void liveness_round(const DomainLockGuard& held, Domain& domain, OwnPool& own) noexcept;

}  // namespace axon::shm
