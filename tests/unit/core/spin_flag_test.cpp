// SpinFlag (src/spin_flag.hpp): one holder at a time, and what a holder
// wrote before unlock() is seen by the next holder (run under TSan too).
#include "src/base/spin_flag.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <mutex>
#include <thread>

namespace axon {
namespace {

TEST(SpinFlag, TryLockFailsWhileHeldAndSucceedsOnceUnlocked) {
  SpinFlag sut;

  ASSERT_TRUE(sut.try_lock());
  EXPECT_FALSE(sut.try_lock()) << "held: a second try changes nothing";
  sut.unlock();
  EXPECT_TRUE(sut.try_lock());
  sut.unlock();
}

TEST(SpinFlag, LockKeepsTwoThreadsOutOfEachOthersSection) {
  constexpr std::uint64_t kRounds = 200'000;
  SpinFlag sut;
  std::uint64_t guarded = 0;  // plain: only the holder touches it
  auto work = [&] {
    for (std::uint64_t i = 0; i < kRounds; ++i) {
      const std::lock_guard<SpinFlag> hold(sut);
      ++guarded;
    }
  };

  std::thread other(work);
  work();
  other.join();

  EXPECT_EQ(guarded, 2 * kRounds) << "an increment was lost: two holders at once";
}

TEST(SpinFlag, ATryingThreadSeesWhatTheHolderWroteBeforeUnlock) {
  SpinFlag sut;
  std::uint64_t payload = 0;
  sut.lock();
  std::thread trier([&] {
    while (!sut.try_lock()) {
      std::this_thread::yield();
    }
    EXPECT_EQ(payload, 42U);
    sut.unlock();
  });
  payload = 42;
  sut.unlock();
  trier.join();
}

}  // namespace
}  // namespace axon
