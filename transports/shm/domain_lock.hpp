// Serializes changes to a domain's registry between processes with flock(2)
// on a lock file: the kernel drops the lock when its holder dies, so a crash
// never leaves the domain locked.
#pragma once

#include <mutex>
#include <string>

#include "axon/result.hpp"

namespace axon::shm {

/// Thread safety: lock()/try_lock()/unlock() may be called from any thread;
/// a process-local mutex serializes threads (flock is per open file, so it
/// would not keep two threads of one process apart).
class DomainLock {
 public:
  explicit DomainLock(std::string path, mode_t mode) : path_(std::move(path)), mode_(mode) {}
  DomainLock(const DomainLock&) = delete;
  DomainLock& operator=(const DomainLock&) = delete;
  ~DomainLock();

  /// Blocks until this process holds the lock. A system call: slow path only.
  Result<void> lock();
  /// Takes the lock if free now; false otherwise (never blocks).
  bool try_lock();
  void unlock() noexcept;
  /// While locked: removes the lock file (the last participant leaving).
  /// Waiters that hold the old file notice and retry with a new one.
  void unlink_while_locked() noexcept;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  Result<bool> acquire(bool blocking);

  std::string path_;
  mode_t mode_;
  std::mutex mutex_;
  int fd_ = -1;
};

/// RAII holder for DomainLock::lock().
class DomainLockGuard {
 public:
  explicit DomainLockGuard(DomainLock& lock) : lock_(lock) {}
  DomainLockGuard(const DomainLockGuard&) = delete;
  DomainLockGuard& operator=(const DomainLockGuard&) = delete;
  ~DomainLockGuard() { lock_.unlock(); }

 private:
  DomainLock& lock_;
};

}  // namespace axon::shm
