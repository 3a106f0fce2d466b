// A joined domain as the node's parts and ports use it: the domain lock, the
// registry (reached only with the lock held), the words read without the
// lock, and who this node is in the domain. DomainMembership joins and leaves.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "axon/result.hpp"
#include "axon/transport.hpp"
#include "transports/shm/domain_lock.hpp"
#include "transports/shm/mapping_guard.hpp"
#include "transports/shm/registry.hpp"
#include "transports/shm/segment.hpp"
#include "transports/shm/shm_config.hpp"

namespace axon::shm {

class PeerWatch;

/// Thread safety: any thread. What needs the domain lock takes its guard.
class Domain {
 public:
  Domain(const Domain&) = delete;
  Domain& operator=(const Domain&) = delete;

  [[nodiscard]] DomainLock& lock() noexcept { return lock_; }
  /// The registry, reached with the lock held; its calls take the guard too.
  [[nodiscard]] Registry& registry(const DomainLockGuard& /*held*/) noexcept { return registry_; }
  /// False (and one error logged) once the registry was truncated or
  /// overwritten while this node ran.
  [[nodiscard]] bool registry_intact(const DomainLockGuard& held) noexcept;
  [[nodiscard]] Error damaged_registry_error(std::string_view topic) const;
  /// Removes the participants whose process is gone from the registry (their
  /// socket files too): as `watch` says (pidfds; /proc only for the processes
  /// it has none of), or without one by reading /proc for every participant.
  void reclaim_dead_participants(const DomainLockGuard& held, const PeerWatch* watch = nullptr) noexcept;

  // Lock-free (the data path): words of the registry that other processes
  // move without the lock.
  [[nodiscard]] std::uint64_t topic_version(std::uint32_t topic) const noexcept {
    return registry_.topic_version(topic);
  }
  /// A publisher of `topic` (its own, registered) freed connections.
  void room_freed(std::uint32_t topic) noexcept { registry_.room_freed(topic); }
  [[nodiscard]] WakeWord& subscriber_wake(std::uint32_t slot) noexcept { return registry_.subscriber_wake(slot); }
  [[nodiscard]] WakeWord& graph_word() noexcept { return registry_.graph_word(); }
  /// The domain's table sizes (fixed once joined): what every index another
  /// process wrote is checked against.
  [[nodiscard]] const RegistryLimits& limits() const noexcept { return registry_.limits(); }

  /// This node's participant entry.
  [[nodiscard]] SlotRef self() const noexcept { return self_; }
  [[nodiscard]] const ShmConfig& config() const noexcept { return config_; }
  /// The registry's incarnation as it reads now (keys of this process's pools).
  [[nodiscard]] std::uint64_t incarnation() const noexcept { return registry_segment_->incarnation; }
  [[nodiscard]] std::string registry_path() const;
  [[nodiscard]] std::string socket_path(std::uint32_t slot, std::uint32_t generation) const;

 protected:
  explicit Domain(const ShmConfig& config);
  ~Domain() = default;

 private:
  friend class DomainMembership;  ///< Joins, leaves: fills in what is below.

  const ShmConfig& config_;
  DomainLock lock_;
  MappedSegment registry_mapping_;
  /// Declared after the mapping: unregistered before it is unmapped.
  GuardedMapping registry_guard_;
  RegistrySegment* registry_segment_ = nullptr;
  std::uint64_t joined_incarnation_ = 0;  ///< The registry's incarnation when we joined.
  bool registry_damaged_ = false;         ///< Sticky; guarded by the domain lock.
  Registry registry_;
  SlotRef self_;
};

}  // namespace axon::shm
