#include "transports/shm/peer_watch.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <system_error>

#include "src/base/log.hpp"

namespace axon::shm {
namespace {

bool same(const ProcessIdentity& a, const ProcessIdentity& b) noexcept {
  return a.pid == b.pid && a.start_time == b.start_time;
}

/// Says once per process why participants are checked through /proc.
void notice_fallback(int err) noexcept {
  static std::atomic<bool> said{false};
  // Relaxed: only keeps the notice from repeating.
  if (said.exchange(true, std::memory_order_relaxed)) {
    return;
  }
  try {
    if (err == ENOSYS || err == EPERM) {
      logger().info(
          "pidfd_open(2) is not available here ({}: a kernel before 5.3, or a seccomp filter); peer processes are "
          "checked by reading /proc/<pid>/stat every liveness period instead, which costs CPU as the domain grows",
          std::generic_category().message(err));
    } else {
      logger().warn(
          "pidfd_open(2) failed ({}); the peer processes concerned are checked by reading /proc/<pid>/stat every "
          "liveness period instead (raise the descriptor limit, ulimit -n, if it says too many open files)",
          std::generic_category().message(err));
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch): logging must not take the node down
  }
}

}  // namespace

int open_pidfd(pid_t pid) noexcept {
#ifdef SYS_pidfd_open
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);  // the kernel sets O_CLOEXEC
  return fd >= 0 ? static_cast<int>(fd) : -errno;
#else
  (void)pid;
  return -ENOSYS;
#endif
}

PeerWatch::~PeerWatch() {
  for (const Watched& w : watched_) {
    if (w.pidfd >= 0) {
      ::close(w.pidfd);
    }
  }
}

void PeerWatch::sync(const DomainLockGuard& held, const Registry& registry) {
  for (Watched& w : watched_) {
    w.named = false;
  }
  unwatched_.clear();
  for (std::uint32_t slot = 0; slot < registry.limits().participants; ++slot) {
    const ParticipantEntry& p = registry.participant(held, slot);
    if (p.state != EntryState::kActive) {
      continue;
    }
    const ProcessIdentity id{.pid = p.pid, .start_time = p.start_time};
    if (same(id, self_)) {
      continue;  // our own nodes die with us
    }
    auto it = std::ranges::find_if(watched_, [&](const Watched& w) { return same(w.id, id); });
    if (it != watched_.end()) {
      it->named = true;
    } else if (std::ranges::none_of(unwatched_, [&](const ProcessIdentity& u) { return same(u, id); })) {
      watch(id);
    }
  }
  std::erase_if(watched_, [](const Watched& w) {
    if (!w.named && w.pidfd >= 0) {
      ::close(w.pidfd);
    }
    return !w.named;
  });
}

void PeerWatch::watch(const ProcessIdentity& id) {
  const int fd = opener_(id.pid);
  if (fd == -ESRCH) {
    // No such process: dead for good, with nothing to watch. Kept as an
    // unwatched participant, so is_dead() reads /proc and says so.
    unwatched_.push_back(id);
    return;
  }
  if (fd < 0) {
    notice_fallback(-fd);
    unwatched_.push_back(id);
    return;
  }
  // The pidfd names whatever process had the pid when it was opened. Only if
  // that process still runs with the participant's start time is it the
  // participant (a recycled pid has another start time); otherwise the
  // participant is dead.
  const bool exited = !is_alive(id);
  watched_.push_back({.id = id, .pidfd = fd, .exited = exited, .named = true});
  exits_pending_ = exits_pending_ || exited;
}

bool PeerWatch::is_dead(const ProcessIdentity& id) const noexcept {
  if (same(id, self_)) {
    return false;  // this code runs: our process is alive
  }
  for (const Watched& w : watched_) {
    if (same(w.id, id)) {
      return w.pidfd >= 0 ? w.exited : !is_alive(id);
    }
  }
  return !is_alive(id);
}

void PeerWatch::poll_fds(std::vector<int>& fds) {
  polled_entries_.clear();
  for (std::size_t i = 0; i < watched_.size(); ++i) {
    // An exited pidfd stays readable: polling it again would spin.
    if (!watched_[i].exited && watched_[i].pidfd >= 0) {
      fds.push_back(watched_[i].pidfd);
      polled_entries_.push_back(i);
    }
  }
}

bool PeerWatch::note_polled(std::span<const pollfd> polled, std::size_t first) noexcept {
  bool exited = false;
  for (std::size_t k = 0; k < polled_entries_.size() && first + k < polled.size(); ++k) {
    const short revents = polled[first + k].revents;
    Watched& w = watched_[polled_entries_[k]];
    if ((revents & POLLIN) != 0) {
      w.exited = true;  // the kernel's word: the process has exited
      exited = true;
    } else if (revents != 0) {
      // The descriptor is unusable (POLLNVAL, POLLERR): never poll it again
      // (it would spin); /proc decides for this process from now on.
      if ((revents & POLLNVAL) == 0) {
        ::close(w.pidfd);
      }
      w.pidfd = -1;
      w.exited = !is_alive(w.id);
      exited = exited || w.exited;
    }
  }
  exits_pending_ = exits_pending_ || exited;
  return exited;
}

}  // namespace axon::shm
