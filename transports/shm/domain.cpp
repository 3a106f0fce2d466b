#include "transports/shm/domain.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "src/base/log.hpp"
#include "transports/shm/endpoint_stats.hpp"
#include "transports/shm/peer_watch.hpp"

namespace axon::shm {

Domain::Domain(const ShmConfig& config)
    : config_(config), lock_(fmt::format("{}/axon_d{}.lock", config.shm_dir, config.domain_id), config.file_mode) {}

std::string Domain::registry_path() const {
  return fmt::format("{}/axon_d{}_registry", config_.shm_dir, config_.domain_id);
}

std::string Domain::socket_path(std::uint32_t slot, std::uint32_t generation) const {
  return fmt::format("{}/axon_d{}_p{}_g{}.sock", config_.shm_dir, config_.domain_id, slot, generation);
}

bool Domain::registry_intact(const DomainLockGuard& /*held*/) noexcept {
  if (registry_damaged_) {
    return false;
  }
  std::string what;
  struct stat st {};
  if (registry_guard_.repairs() != 0) {
    what = "it was truncated while mapped (this process grew it back on a fault; its tables are lost)";
  } else if (::fstat(registry_mapping_.fd(), &st) != 0 ||
             static_cast<std::size_t>(st.st_size) != registry_mapping_.bytes()) {
    what = fmt::format("it was truncated to {} bytes (the registry has {})", st.st_size, registry_mapping_.bytes());
  } else if (registry_segment_->header.magic != kSegmentMagic ||
             // Acquire pairs with the creator's release store of `ready`.
             registry_segment_->header.ready.load(std::memory_order_acquire) != 1 ||
             registry_segment_->incarnation != joined_incarnation_) {
    what = "its header was overwritten";
  } else {
    return true;
  }
  registry_damaged_ = true;
  try {
    logger().error(
        "the registry {} of domain {} was damaged while node '{}' ran: {}. The node keeps its connections "
        "and its data flows, but it sees no new publishers or subscribers and no node can join the domain: "
        "restart the processes of domain {} (and keep cleanup scripts away from {}/axon_d* while axon runs)",
        registry_path(), config_.domain_id, config_.node_name, what, config_.domain_id, config_.shm_dir);
  } catch (...) {  // NOLINT(bugprone-empty-catch): logging must not take the node down
  }
  return false;
}

Error Domain::damaged_registry_error(std::string_view topic) const {
  return {ErrorCode::kIncompatible,
          fmt::format("topic '{}': the registry {} of domain {} was damaged (truncated or overwritten) while node "
                      "'{}' ran, so no endpoint can be added; restart the processes of domain {}",
                      topic, registry_path(), config_.domain_id, config_.node_name, config_.domain_id)};
}

void Domain::reclaim_dead_participants(const DomainLockGuard& held, const PeerWatch* watch) noexcept {
  std::vector<std::uint32_t> dead;
  try {
    if (watch == nullptr) {
      dead = registry_.dead_participants(held);
    } else {
      for (std::uint32_t slot = 0; slot < registry_.limits().participants; ++slot) {
        const ParticipantEntry& p = registry_.participant(held, slot);
        if (p.state == EntryState::kActive && watch->is_dead({.pid = p.pid, .start_time = p.start_time})) {
          dead.push_back(slot);
        }
      }
    }
  } catch (...) {  // out of memory: the next round tries again
    return;
  }
  for (const std::uint32_t participant : dead) {
    const ParticipantEntry& p = registry_.participant(held, participant);
    // strnlen: the name was written by another process.
    logger().warn("participant '{}' (pid {}) of domain {} is gone; reclaiming what it held",
                  std::string_view(p.name, ::strnlen(p.name, sizeof(p.name))), p.pid, config_.domain_id);
    ::unlink(socket_path(participant, p.generation).c_str());
    ::unlink(stats_path(config_.shm_dir, config_.domain_id, participant, p.generation).c_str());
    registry_.remove_participant(held, participant);
  }
}

}  // namespace axon::shm
