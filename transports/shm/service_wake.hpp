// The eventfd that wakes the node's service thread: written by any thread
// that has work for it (a pool to fetch, the node stopping).
#pragma once

#include "axon/result.hpp"

namespace axon::shm {

/// Thread safety: wake() from any thread; drain() by the service thread.
class ServiceWake {
 public:
  ServiceWake() = default;
  ServiceWake(const ServiceWake&) = delete;
  ServiceWake& operator=(const ServiceWake&) = delete;
  ~ServiceWake();

  /// Creates the eventfd (a system call; start-up).
  Result<void> open();
  /// One eventfd write; never blocks.
  void wake() const noexcept;
  /// Reads the count, so that the next poll waits again.
  void drain() const noexcept;
  [[nodiscard]] int fd() const noexcept { return fd_; }

 private:
  int fd_ = -1;
};

}  // namespace axon::shm
