// SpinClock: a busy spin reads the clock once every kSpinPassesPerClockRead
// passes, other strategies on every pass, and refresh() forces a reading.
#include "src/scheduler/spin_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>

namespace axon::detail {
namespace {

constexpr std::int64_t kPauseNs = 2'000'000;

void pause() { std::this_thread::sleep_for(std::chrono::nanoseconds(kPauseNs)); }

TEST(SpinClock, ABusySpinReadsTheClockOnceEveryPassesPerRead) {
  SpinClock clock(WaitStrategy::busy_spin());
  const std::int64_t first = clock.now();
  pause();
  for (std::uint32_t pass = 1; pass < kSpinPassesPerClockRead; ++pass) {
    EXPECT_EQ(clock.now(), first) << "pass " << pass;  // time went by, but this pass reuses the reading
  }
  EXPECT_GE(clock.now(), first + kPauseNs);  // the next reading
}

TEST(SpinClock, RefreshMakesTheNextPassReadTheClock) {
  SpinClock clock(WaitStrategy::busy_spin());
  const std::int64_t first = clock.now();
  pause();
  clock.refresh();
  EXPECT_GE(clock.now(), first + kPauseNs);
}

TEST(SpinClock, OtherStrategiesReadTheClockOnEveryPass) {
  for (const WaitStrategy strategy : {WaitStrategy::blocking(), WaitStrategy::spin_yield_sleep()}) {
    SpinClock clock(strategy);
    const std::int64_t first = clock.now();
    pause();
    EXPECT_GE(clock.now(), first + kPauseNs);
  }
}

}  // namespace
}  // namespace axon::detail
