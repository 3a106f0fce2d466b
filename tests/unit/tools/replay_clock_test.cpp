// The replay's clock: absolute deadlines from one base (no error carried from one message to the next), the wait
// that never returns before its deadline, and the timing percentiles.
#include "src/tools/axon/play/replay_clock.hpp"

#include <gtest/gtest.h>

#include "src/tools/axon/play/timing_stats.hpp"

namespace axon::tools {
namespace {

TEST(ReplayClock, DeadlinesAreTheBasePlusTheLogGapOverTheRate) {
  ReplayClock sut(2.0);
  sut.rebase(1'000, 5'000'000);

  EXPECT_EQ(sut.deadline_ns(5'000'000), 1'000);
  EXPECT_EQ(sut.deadline_ns(7'000'000), 1'000 + 1'000'000);
  EXPECT_EQ(sut.deadline_ns(4'000'000), 1'000);  // before the base: due at once
}

TEST(ReplayClock, DeadlinesDoNotDriftOverManyMessages) {
  ReplayClock sut(1.0 / 3.0);  // a rate whose gaps are not whole nanoseconds
  sut.rebase(0, 0);

  // 1 ms gaps at a third of the speed: message n is due at exactly 3 n ms, however many came before.
  EXPECT_EQ(sut.deadline_ns(1'000'000'000'000ULL), 3'000'000'000'000LL);
  EXPECT_EQ(sut.deadline_ns(1'000'000ULL * 1'000'001), 3'000'000LL * 1'000'001);
}

class ReplayClockWait : public ::testing::TestWithParam<ReplayWait> {};

TEST_P(ReplayClockWait, ReturnsNoEarlierThanTheDeadline) {
  const ReplayClock sut(1.0, GetParam());
  const std::int64_t deadline = monotonic_now_ns() + 2'000'000;

  ASSERT_TRUE(sut.wait_until(deadline, [] { return false; }));

  EXPECT_GE(monotonic_now_ns(), deadline);
}

TEST_P(ReplayClockWait, StopsWhenInterrupted) {
  const ReplayClock sut(1.0, GetParam());
  const std::int64_t start = monotonic_now_ns();

  EXPECT_FALSE(sut.wait_until(start + 10'000'000'000, [] { return true; }));

  EXPECT_LT(monotonic_now_ns() - start, 1'000'000'000);
}

TEST_P(ReplayClockWait, AsksWhetherInterruptedEverySliceWhileFarFromTheDeadline) {
  const ReplayClock sut(1.0, GetParam());
  int asked = 0;
  const std::int64_t start = monotonic_now_ns();

  // Interrupted at the third question: two whole slices waited first, whether the slices sleep or spin.
  EXPECT_FALSE(sut.wait_until(start + 10'000'000'000, [&] { return ++asked == 3; }));

  EXPECT_EQ(asked, 3);
  EXPECT_GE(monotonic_now_ns() - start, 2 * ReplayClock::kSleepSliceNs);
}

INSTANTIATE_TEST_SUITE_P(SleepThenSpinAndSpin, ReplayClockWait,
                         ::testing::Values(ReplayWait::kSleepThenSpin, ReplayWait::kSpin),
                         [](const ::testing::TestParamInfo<ReplayWait>& info) {
                           return info.param == ReplayWait::kSpin ? std::string("Spin") : std::string("SleepThenSpin");
                         });

TEST(TimingStats, NearestRankPercentiles) {
  TimingStats sut;
  for (int i = 100; i >= 1; --i) {
    sut.add(i * 1000);
  }

  const TimingSummary summary = sut.summary();

  EXPECT_EQ(summary.samples, 100U);
  EXPECT_EQ(summary.p50_ns, 50'000);
  EXPECT_EQ(summary.p99_ns, 99'000);
  EXPECT_EQ(summary.max_ns, 100'000);
  EXPECT_EQ(TimingStats{}.summary().samples, 0U);
}

}  // namespace
}  // namespace axon::tools
