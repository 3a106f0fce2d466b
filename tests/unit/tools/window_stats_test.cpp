#include "src/tools/axon/topic/window_stats.hpp"

#include <gtest/gtest.h>

namespace axon::tools {
namespace {

TEST(WindowStats, GivesRateAndPeriodSpreadOfPublishTimes) {
  WindowStats sut(100);
  // Periods 10, 20, 10, 20 ms: mean 15 ms, std 5 ms.
  for (const std::int64_t t_ms : {0, 10, 30, 40, 60}) {
    sut.add(t_ms * 1'000'000, 100);
  }
  const WindowFigures f = sut.figures();
  EXPECT_EQ(f.messages, 5U);
  EXPECT_DOUBLE_EQ(f.rate_hz, 4 / 0.060);
  EXPECT_DOUBLE_EQ(f.period_mean_s, 0.015);
  EXPECT_DOUBLE_EQ(f.period_min_s, 0.010);
  EXPECT_DOUBLE_EQ(f.period_max_s, 0.020);
  EXPECT_NEAR(f.period_std_s, 0.005, 1e-12);
}

TEST(WindowStats, GivesBytesPerSecondAndSizes) {
  WindowStats sut(100);
  sut.add(0, 10);
  sut.add(500'000'000, 30);
  sut.add(1'000'000'000, 50);
  const WindowFigures f = sut.figures();
  EXPECT_DOUBLE_EQ(f.bytes_per_s, 80.0);  // what came after the first message, over one second
  EXPECT_DOUBLE_EQ(f.size_mean_bytes, 30.0);
  EXPECT_EQ(f.size_min_bytes, 10U);
  EXPECT_EQ(f.size_max_bytes, 50U);
  EXPECT_EQ(sut.total_bytes(), 90U);
}

TEST(WindowStats, KeepsOnlyTheLastWindowOfMessages) {
  WindowStats sut(3);
  for (std::int64_t i = 0; i < 10; ++i) {
    sut.add(i * 1'000'000, static_cast<std::uint64_t>(i));
  }
  const WindowFigures f = sut.figures();
  EXPECT_EQ(f.messages, 3U);
  EXPECT_EQ(f.size_min_bytes, 7U);
  EXPECT_EQ(sut.total_messages(), 10U);
}

TEST(WindowStats, HasNoRateBelowTwoMessages) {
  WindowStats sut(10);
  EXPECT_EQ(sut.figures().rate_hz, 0.0);
  sut.add(5, 8);
  EXPECT_EQ(sut.figures().rate_hz, 0.0);
  EXPECT_EQ(sut.figures().size_max_bytes, 8U);
}

}  // namespace
}  // namespace axon::tools
