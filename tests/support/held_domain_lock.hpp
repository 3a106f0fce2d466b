// A real domain lock, taken once and held by a test, for the Registry calls
// that ask for its guard.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "tests/support/common/temp_dir.hpp"
#include "transports/shm/domain_lock.hpp"

namespace axon::shm::test_support {

class HeldDomainLock {
 public:
  explicit HeldDomainLock(const std::string& dir_prefix) : dir_(dir_prefix) {}

  /// The guard: the lock is taken on the first call and held until the end.
  const DomainLockGuard& held() {
    if (!guard_) {
      auto taken = lock_.lock();
      EXPECT_TRUE(taken) << taken.error().message();
      guard_.emplace(std::move(*taken));
    }
    return *guard_;
  }

 private:
  test::TempDir dir_;
  DomainLock lock_{dir_.path() + "/axon_d0.lock", 0600};
  std::optional<DomainLockGuard> guard_;
};

}  // namespace axon::shm::test_support
