#include "transports/shm/domain_membership.hpp"

#include <fmt/format.h>
#include <grp.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include "src/base/errors.hpp"
#include "src/base/log.hpp"
#include "transports/shm/chunk_pool.hpp"
#include "transports/shm/pool_segment.hpp"
#include "transports/shm/process_identity.hpp"

namespace axon::shm {

Result<gid_t> group_id(const std::string& group) {
  if (group.empty()) {
    return static_cast<gid_t>(-1);
  }
  struct group* g = ::getgrnam(group.c_str());  // NOLINT(concurrency-mt-unsafe): start-up only
  if (g == nullptr) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("group '{}' does not exist; create it or fix NodeOptions::group", group));
  }
  return g->gr_gid;
}

Result<void> DomainMembership::join(const DomainLockGuard& held) {
  if (auto reg = open_or_create_registry(held); !reg) {
    return reg.error();
  }
  if (auto same = check_requested_limits(); !same) {
    forget_registry();  // never joined: leave() has nothing to undo
    return same.error();
  }
  // Held for the node's life (the kernel drops it at any death, even
  // SIGKILL): a joiner that finds the registry damaged replaces it only when
  // nobody holds it. Never contended here: the only exclusive taker holds
  // the domain lock, as we do.
  if (::flock(registry_mapping_.fd(), LOCK_SH | LOCK_NB) != 0) {
    return system_error(errno, fmt::format("flock(LOCK_SH) of {}", registry_path()));
  }
  joined_incarnation_ = registry_segment_->incarnation;
  auto pool_bytes = ChunkPool::bytes_needed(config_.chunk_classes);
  if (!pool_bytes) {
    return pool_bytes.error();
  }
  const PoolLayout layout = PoolLayout::of(config_.publisher_blocks, config_.connections, config_.queue_slots);
  auto self = registry_.add_participant(held, self_identity(), config_.node_name, layout.segment_bytes(*pool_bytes),
                                        config_.connections, config_.queue_slots);
  if (!self) {
    return self.error();
  }
  self_ = *self;
  return {};
}

Result<void> DomainMembership::check_requested_limits() const {
  if (!config_.limits || *config_.limits == registry_.limits()) {
    return {};
  }
  const RegistryLimits& want = *config_.limits;
  const RegistryLimits& has = registry_.limits();
  return Error(ErrorCode::kIncompatible,
               fmt::format("node '{}' asks for limits {}, but domain {} was created with {} (the first node sets "
                           "them): give every node of the domain the same limits: (deployment file) or "
                           "NodeOptions::domain_limits, or leave them unset in this node to take the domain's",
                           config_.node_name, describe_limits(want), config_.domain_id, describe_limits(has)));
}

void DomainMembership::remove_self(const DomainLockGuard& held) noexcept {
  registry_.remove_participant(held, self_.slot);
}

void DomainMembership::leave(FdServer& server) noexcept {
  if (registry_segment_ == nullptr) {
    return;
  }
  lock_.with_lock([&](const DomainLockGuard& held) {
    if (!registry_intact(held)) {
      leave_damaged(server, held);
      return;
    }
    if (registry_.participant_is(held, self_)) {
      registry_.remove_participant(held, self_.slot);
    }
    server.close();
    reclaim_dead_participants(held);
    if (registry_.active_participants(held) == 0) {
      // Last one out: nothing of the domain stays in the shm directory.
      ::unlink(registry_path().c_str());
      remove_stale_files(held);  // schema files of topics that outlived their endpoints
      lock_.unlink_while_locked(held);
    }
    logger().debug("node '{}' left domain {}", config_.node_name, config_.domain_id);
  });
}

void DomainMembership::leave_damaged(FdServer& server, const DomainLockGuard& held) noexcept {
  // Its tables are lost, and other nodes may still run on it: remove the
  // file only when no other participant holds it (see join()).
  server.close();
  ::flock(registry_mapping_.fd(), LOCK_UN);
  if (::flock(registry_mapping_.fd(), LOCK_EX | LOCK_NB) == 0) {
    ::unlink(registry_path().c_str());
    remove_stale_files(held);
    lock_.unlink_while_locked(held);
  }
}

}  // namespace axon::shm
