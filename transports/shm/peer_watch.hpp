// Which peer processes of the domain have exited, at a cost that does not
// grow with the domain while nothing happens: one pidfd per peer process
// (pidfd_open(2); several nodes of one process share it), which the kernel
// makes readable when that process exits, polled by the node's service
// thread with its other descriptors. An idle node makes no system call for
// liveness. Where a pidfd cannot be had (pidfd_open missing: ENOSYS on an
// old kernel or under seccomp; out of descriptors) the participant is
// checked the old way, by reading /proc/<pid>/stat every liveness period.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "transports/shm/process_identity.hpp"
#include "transports/shm/registry.hpp"

namespace axon::shm {

/// pidfd_open(pid, 0): a descriptor, or -errno. Replaceable for tests.
using PidfdOpener = int (*)(pid_t pid) noexcept;
int open_pidfd(pid_t pid) noexcept;

/// Thread safety: one thread (the node's service thread) does everything.
class PeerWatch {
 public:
  /// `self`: this process (its other nodes need no watching).
  explicit PeerWatch(ProcessIdentity self, PidfdOpener opener = &open_pidfd) noexcept : self_(self), opener_(opener) {}
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  /// Watches every process of the registry's active participants (opening a
  /// pidfd for the new ones, whose start time is checked after the open, so
  /// a recycled pid is never watched in place of the participant), and
  /// stops watching processes no participant names any more. Allocates.
  void sync(const DomainLockGuard& held, const Registry& registry);

  /// Whether the participant `id` has exited: from the pidfd, no system
  /// call; for an unwatched one by reading /proc (is_alive()).
  [[nodiscard]] bool is_dead(const ProcessIdentity& id) const noexcept;

  /// Appends the pidfds of the processes not seen exited yet to `fds`.
  void poll_fds(std::vector<int>& fds);
  /// Reads what poll() said about the descriptors poll_fds() appended
  /// (`polled` holds them from index `first` on). True when one exited.
  bool note_polled(std::span<const pollfd> polled, std::size_t first) noexcept;

  /// A watched process exited and no round has removed its participants yet.
  [[nodiscard]] bool exit_pending() const noexcept { return exits_pending_; }
  /// Called after a round removed the dead participants.
  void exits_handled() noexcept { exits_pending_ = false; }
  /// Participants without a pidfd: they are checked every liveness period.
  [[nodiscard]] bool polls_proc() const noexcept {
    return !unwatched_.empty() || std::ranges::any_of(watched_, [](const Watched& w) { return w.pidfd < 0; });
  }
  [[nodiscard]] std::size_t watched_processes() const noexcept { return watched_.size(); }

 private:
  struct Watched {
    ProcessIdentity id;
    int pidfd = -1;  ///< -1: unusable, checked through /proc.
    bool exited = false;
    bool named = false;  ///< sync()'s mark: a participant still names it.
  };
  void watch(const ProcessIdentity& id);

  ProcessIdentity self_;
  PidfdOpener opener_;
  std::vector<Watched> watched_;
  std::vector<ProcessIdentity> unwatched_;
  std::vector<std::size_t> polled_entries_;  ///< watched_ index of each descriptor poll_fds() appended.
  bool exits_pending_ = false;
};

}  // namespace axon::shm
