// Holding the domain lock is a value: lock() and try_lock() return a guard,
// the guard releases the lock exactly once (also after a move), the helpers
// run their function only while holding it, and another process that holds
// the lock keeps us out until it exits (the kernel drops its flock), and a
// child forked while we held it does not keep it once we let go.
#include "transports/shm/domain_lock.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <future>
#include <optional>
#include <string>
#include <utility>

#include "tests/support/child_process.hpp"
#include "tests/support/common/temp_dir.hpp"

namespace axon::shm {
namespace {

class DomainLockTest : public ::testing::Test {
 protected:
  /// Whether another thread of this process could take the lock now.
  bool free_for_another_thread() {
    return std::async(std::launch::async, [this] { return lock.try_lock().has_value(); }).get();
  }

  test::TempDir dir{"axon-domain-lock"};
  DomainLock lock{dir.path() + "/axon_d0.lock", 0600};
};

TEST_F(DomainLockTest, LockReturnsAGuardThatReleasesTheLock) {
  {
    auto held = lock.lock();
    ASSERT_TRUE(held) << held.error().message();
    EXPECT_FALSE(free_for_another_thread());
  }
  EXPECT_TRUE(free_for_another_thread());
}

TEST_F(DomainLockTest, TryLockGivesNothingWhileAnotherThreadHoldsIt) {
  auto held = lock.try_lock();
  ASSERT_TRUE(held.has_value());
  EXPECT_FALSE(free_for_another_thread());
  held.reset();
  EXPECT_TRUE(free_for_another_thread());
}

TEST_F(DomainLockTest, AMovedGuardReleasesOnceWhenTheLastOwnerGoes) {
  auto held = lock.lock();
  ASSERT_TRUE(held);
  std::optional<DomainLockGuard> moved(std::in_place, std::move(*held));
  held = Error(ErrorCode::kInvalidArgument, "moved from");  // destroys the moved-from guard
  EXPECT_FALSE(free_for_another_thread());
  moved.reset();
  EXPECT_TRUE(free_for_another_thread());
}

TEST_F(DomainLockTest, WithLockRunsTheFunctionHoldingTheLock) {
  bool ran = false;
  EXPECT_TRUE(lock.with_lock([&](const DomainLockGuard& /*held*/) {
    ran = true;
    EXPECT_FALSE(free_for_another_thread());
  }));
  EXPECT_TRUE(ran);
  EXPECT_TRUE(free_for_another_thread());
}

TEST_F(DomainLockTest, WithLockIfFreeNeitherWaitsNorRunsWhileTheLockIsHeld) {
  auto held = lock.lock();
  ASSERT_TRUE(held);
  const bool ran = std::async(std::launch::async, [this] {
                     return lock.with_lock_if_free([](const DomainLockGuard& /*held*/) { ADD_FAILURE(); });
                   }).get();
  EXPECT_FALSE(ran);
}

TEST_F(DomainLockTest, AnotherProcessHoldingTheLockKeepsUsOutUntilItExits) {
  int ready[2];
  int quit[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(quit), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(quit[1]);  // the parent's end: its close is our signal
    DomainLock theirs(lock.path(), 0600);
    auto held = theirs.lock();
    const char byte = held ? 1 : 0;
    [[maybe_unused]] auto n = ::write(ready[1], &byte, 1);
    char ignored = 0;
    n = ::read(quit[0], &ignored, 1);  // until the parent has checked
    ::_exit(0);                        // dies holding it: the kernel releases it
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ASSERT_EQ(byte, 1);
  EXPECT_FALSE(lock.try_lock().has_value());
  ::close(quit[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(lock.try_lock().has_value());
  ::close(ready[0]);
  ::close(ready[1]);
  ::close(quit[0]);
}

// A process that forks while one of its threads holds the lock (an
// application's worker, a test's helper) shares the locked open file with
// the child. Releasing must not wait for that child to exit.
TEST_F(DomainLockTest, AChildForkedWhileTheLockIsHeldDoesNotKeepItOnceReleased) {
  std::optional<DomainLockGuard> held;
  {
    auto taken = lock.lock();
    ASSERT_TRUE(taken) << taken.error().message();
    held.emplace(std::move(*taken));
  }
  auto child = test::ChildProcess::fork_and_run([] {
    ::pause();  // keeps the inherited descriptor open until killed
    return 0;
  });
  held.reset();
  EXPECT_TRUE(free_for_another_thread());
  child.kill(SIGKILL);
  EXPECT_EQ(child.wait(std::chrono::seconds(10)), 128 + SIGKILL);
}

}  // namespace
}  // namespace axon::shm
