#include "transports/shm/domain_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "src/base/errors.hpp"

namespace axon::shm {

DomainLock::~DomainLock() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

Result<bool> DomainLock::acquire(bool blocking) {
  // The file may be unlinked by the last participant while we wait on it;
  // holding a lock on an unlinked file protects nothing, so check that the
  // locked file is still the one at `path_` and retry otherwise.
  for (;;) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, mode_);
    if (fd < 0) {
      return system_error(errno, fmt::format("open lock file {}", path_));
    }
    ::fchmod(fd, mode_);  // best effort: umask may have narrowed it
    if (::flock(fd, blocking ? LOCK_EX : LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd);
      if (!blocking && err == EWOULDBLOCK) {
        return false;
      }
      if (err == EINTR) {
        continue;
      }
      return system_error(err, fmt::format("flock {}", path_));
    }
    struct stat locked {};
    struct stat current {};
    if (::fstat(fd, &locked) == 0 && ::stat(path_.c_str(), &current) == 0 && locked.st_ino == current.st_ino &&
        locked.st_dev == current.st_dev) {
      fd_ = fd;
      return true;
    }
    ::close(fd);  // unlinked or replaced under us: try again
  }
}

Result<DomainLockGuard> DomainLock::lock() {
  mutex_.lock();
  auto taken = acquire(true);
  if (!taken) {
    mutex_.unlock();
    return taken.error();
  }
  return DomainLockGuard(*this);
}

std::optional<DomainLockGuard> DomainLock::try_lock() {
  if (!mutex_.try_lock()) {
    return std::nullopt;
  }
  auto taken = acquire(false);
  if (!taken || !*taken) {
    mutex_.unlock();
    return std::nullopt;
  }
  return DomainLockGuard(*this);
}

void DomainLock::unlock() noexcept {
  if (fd_ >= 0) {
    // Unlock before closing: a child forked while we held the lock shares
    // this open file, and close() alone would leave it locked until that
    // child exits or execs.
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
    fd_ = -1;
  }
  mutex_.unlock();
}

void DomainLock::unlink_while_locked(const DomainLockGuard& /*held*/) noexcept { ::unlink(path_.c_str()); }

}  // namespace axon::shm
