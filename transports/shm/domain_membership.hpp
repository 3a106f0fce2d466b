// Joining and leaving a domain: opens (or creates, or replaces when it was
// abandoned damaged) the registry, adds this node as a participant, and at
// the end removes it, the last one out removing the domain's files.
#pragma once

#include <sys/types.h>

#include <string>

#include "axon/result.hpp"
#include "transports/shm/domain.hpp"
#include "transports/shm/fd_channel.hpp"

namespace axon::shm {

/// The group id of `group` (NodeOptions::group), or "none" for an empty name.
Result<gid_t> group_id(const std::string& group);

/// Thread safety: join() and leave() from the thread that owns the node; the
/// rest (Domain) from any thread.
class DomainMembership final : public Domain {
 public:
  explicit DomainMembership(const ShmConfig& config) : Domain(config) {}
  DomainMembership(const DomainMembership&) = delete;
  DomainMembership& operator=(const DomainMembership&) = delete;
  ~DomainMembership() = default;

  /// Opens the registry and adds this node (self()), with a pool of the
  /// configured chunk classes.
  Result<void> join(const DomainLockGuard& held);
  /// Undoes join() when the node could not start after it.
  void remove_self(const DomainLockGuard& held) noexcept;
  /// Removes this node from the registry and closes `server` (its socket);
  /// the last participant removes the domain's files. Waits for the lock.
  void leave(FdServer& server) noexcept;

 private:
  // The registry file (registry_file.cpp).
  Result<void> open_or_create_registry(const DomainLockGuard& held);
  Result<void> create_registry(const DomainLockGuard& held);
  /// Makes `mapping` this node's registry: guards it against truncation.
  Result<void> adopt_registry(MappedSegment mapping);
  /// The registry behind `fd` has `file_bytes`, not a registry's size:
  /// replaced when it is a damaged one of ours nobody uses, else an error.
  /// The caller closes `fd`.
  Result<void> replace_of_wrong_size(const DomainLockGuard& held, int fd, std::size_t file_bytes);
  /// Why the registry of this build behind `fd` cannot have `file_bytes`
  /// (its head's limits need another size), read without mapping it; ""
  /// when the size fits, or when it is not a registry of this build.
  static std::string size_mismatch(int fd, std::size_t file_bytes);
  /// Checks the mapped registry's limits against its `file_bytes` and makes
  /// its tables reachable; what is wrong with them ("" when nothing is).
  std::string attach_tables(std::size_t file_bytes);
  /// An error when this node asked for other limits than the registry has.
  [[nodiscard]] Result<void> check_requested_limits() const;
  /// Drops the registry mapped by a failed open.
  void forget_registry() noexcept;
  /// Replaces the damaged registry behind `fd` when no live participant
  /// holds it (flock); otherwise an error that says `what` and the fix.
  Result<void> replace_if_abandoned(const DomainLockGuard& held, int fd, const std::string& what);
  /// Removes the socket and statistics files of the domain's participants.
  void remove_stale_files(const DomainLockGuard& held) const;
  /// leave() of a registry damaged while we ran.
  void leave_damaged(FdServer& server, const DomainLockGuard& held) noexcept;
};

}  // namespace axon::shm
