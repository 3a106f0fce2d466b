// The liveness round: what the node does when a watched peer process exited,
// at its periodic sweep, or on check_liveness_now(), to notice departed peers
// and take back what they held.
#pragma once

#include "transports/shm/domain.hpp"
#include "transports/shm/own_pool.hpp"
#include "transports/shm/peer_watch.hpp"

namespace axon::shm {

/// Removes dead participants from the registry and closes the connections
/// of subscribers that left (both only while the registry is intact), then
/// reclaims what closing connections and retired publishers left in `own`.
/// Who is dead: as `watch` says (pidfds), or without one by reading /proc for
/// every participant. With a watch it also watches the participants that
/// joined since and stops watching the processes that left.
void liveness_round(const DomainLockGuard& held, Domain& domain, OwnPool& own, PeerWatch* watch = nullptr) noexcept;

/// Whether `own` still holds work for a later round: a retired publisher
/// block or a closing connection (a subscriber left; its publisher is idle
/// or was busy last round). Reads our pool only; no lock, no system call.
[[nodiscard]] bool reclaims_pending(const OwnPool& own) noexcept;

}  // namespace axon::shm
