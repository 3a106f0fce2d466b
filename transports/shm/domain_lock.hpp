// Serializes changes to a domain's registry between processes with flock(2)
// on a lock file: the kernel drops the lock when its holder dies, so a crash
// never leaves the domain locked. Holding the lock is a value: lock() and
// try_lock() return a DomainLockGuard, and every function that needs the
// lock takes one (`const DomainLockGuard&`), so it cannot be called without.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "axon/result.hpp"

namespace axon::shm {

class DomainLock;

/// Proof that this thread holds a DomainLock; releases it when destroyed.
/// Only DomainLock makes one. Movable (to return it), never copied.
class [[nodiscard]] DomainLockGuard {
 public:
  DomainLockGuard(DomainLockGuard&& other) noexcept : lock_(std::exchange(other.lock_, nullptr)) {}
  DomainLockGuard(const DomainLockGuard&) = delete;
  DomainLockGuard& operator=(const DomainLockGuard&) = delete;
  DomainLockGuard& operator=(DomainLockGuard&&) = delete;
  ~DomainLockGuard();

 private:
  friend class DomainLock;
  explicit DomainLockGuard(DomainLock& lock) noexcept : lock_(&lock) {}

  DomainLock* lock_;
};

/// Thread safety: lock()/try_lock() may be called from any thread; a
/// process-local mutex serializes threads (flock is per open file, so it
/// would not keep two threads of one process apart).
class DomainLock {
 public:
  explicit DomainLock(std::string path, mode_t mode) : path_(std::move(path)), mode_(mode) {}
  DomainLock(const DomainLock&) = delete;
  DomainLock& operator=(const DomainLock&) = delete;
  ~DomainLock();

  /// Blocks until this process holds the lock. A system call: slow path only.
  [[nodiscard]] Result<DomainLockGuard> lock();
  /// The lock if it is free now; nothing otherwise (never blocks).
  [[nodiscard]] std::optional<DomainLockGuard> try_lock();

  /// Runs `f(guard)` holding the lock; false (and `f` not run) when the lock
  /// could not be taken. For callers with nothing to do about the error.
  template <class F>
  bool with_lock(F&& f) {
    auto guard = lock();
    if (!guard) {
      return false;
    }
    std::forward<F>(f)(*guard);
    return true;
  }
  /// with_lock(), but only if the lock is free now (never blocks): for
  /// threads that must not wait behind a holder that may be stopped.
  template <class F>
  bool with_lock_if_free(F&& f) {
    auto guard = try_lock();
    if (!guard) {
      return false;
    }
    std::forward<F>(f)(*guard);
    return true;
  }

  /// Removes the lock file (the last participant leaving). Waiters that hold
  /// the old file notice and retry with a new one.
  void unlink_while_locked(const DomainLockGuard& held) noexcept;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  friend class DomainLockGuard;
  Result<bool> acquire(bool blocking);
  void unlock() noexcept;

  std::string path_;
  mode_t mode_;
  std::mutex mutex_;
  int fd_ = -1;
};

inline DomainLockGuard::~DomainLockGuard() {
  if (lock_ != nullptr) {
    lock_->unlock();
  }
}

}  // namespace axon::shm
