// The latency histogram of the statistics segment: bucket edges, percentiles
// by nearest rank, and the ring of one-second windows (what ages out, what a
// reused window forgets).
#include "transports/shm/latency_histogram.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

namespace axon::shm {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kBase = 1000 * kSecond;  // a CLOCK_MONOTONIC time well past boot

TEST(LatencyBuckets, EachLatencyLiesWithinItsBucketsEdges) {
  for (std::uint64_t ns : {0ULL, 1ULL, 63ULL, 64ULL, 95ULL, 96ULL, 127ULL, 128ULL, 1000ULL, 123'456ULL, 999'999'999ULL,
                           60'000'000'000ULL, (1ULL << 37) - 1, 1ULL << 37, ~0ULL}) {
    const std::uint32_t b = latency_bucket(ns);
    ASSERT_LT(b, kLatencyBuckets);
    EXPECT_LE(latency_bucket_lower_ns(b), ns) << ns;
    if (b + 1 < kLatencyBuckets) {  // the last bucket has no upper edge
      EXPECT_LT(ns, latency_bucket_upper_ns(b)) << ns << " in bucket " << b;
    }
  }
}

TEST(LatencyBuckets, AreContiguousAndAtMostHalfAsWideAsTheirLowerEdge) {
  for (std::uint32_t b = 1; b + 1 < kLatencyBuckets; ++b) {
    EXPECT_EQ(latency_bucket_upper_ns(b), latency_bucket_lower_ns(b + 1));
    EXPECT_LE(latency_bucket_upper_ns(b) - latency_bucket_lower_ns(b), latency_bucket_lower_ns(b) / 2) << b;
    EXPECT_EQ(latency_bucket(latency_bucket_lower_ns(b)), b);
    EXPECT_EQ(latency_bucket(latency_bucket_upper_ns(b) - 1), b);
  }
  EXPECT_EQ(latency_bucket_lower_ns(1), 64U);
  EXPECT_GT(latency_bucket_lower_ns(kLatencyBuckets - 1), 60ULL * 1'000'000'000);  // past a minute
}

TEST(LatencyAtRank, IsTheUpperEdgeOfTheBucketHoldingTheRankCappedAtTheMax) {
  std::array<std::uint64_t, kLatencyBuckets> buckets{};
  buckets[latency_bucket(100)] = 90;    // [96, 128)
  buckets[latency_bucket(1000)] = 9;    // [896, 1024)
  buckets[latency_bucket(50'000)] = 1;  // [49152, 65536)
  EXPECT_EQ(latency_at_rank(buckets, 1, 50'000), 128U);
  EXPECT_EQ(latency_at_rank(buckets, 90, 50'000), 128U);
  EXPECT_EQ(latency_at_rank(buckets, 91, 50'000), 1024U);
  EXPECT_EQ(latency_at_rank(buckets, 100, 50'000), 50'000U) << "capped at the max";
}

class LatencyWindowsTest : public ::testing::Test {
 protected:
  std::unique_ptr<LatencyWindows> windows_ = std::make_unique<LatencyWindows>();
  LatencyRecorder sut_{windows_.get()};

  /// `count` takes of `latency_ns` each, in the second starting at `at`.
  void record(std::int64_t at, std::uint64_t latency_ns, int count) {
    for (int i = 0; i < count; ++i) {
      const std::int64_t now = at + i;
      sut_.record(now, now - static_cast<std::int64_t>(latency_ns));
    }
  }
};

TEST_F(LatencyWindowsTest, SummarizesPercentilesCountMaxAndMean) {
  record(kBase, 100, 900);      // p50, p90
  record(kBase, 1'000, 90);     // p99
  record(kBase, 10'000, 9);     // p99.9
  record(kBase, 1'000'000, 1);  // the max
  const LatencySummary s = summarize_latency(*windows_, kBase + 10);
  EXPECT_EQ(s.count, 1000U);
  EXPECT_EQ(s.p50_ns, 128U);
  EXPECT_EQ(s.p90_ns, 128U);
  EXPECT_EQ(s.p99_ns, 1024U);
  EXPECT_EQ(s.p999_ns, 12'288U);  // [8192, 12288)
  EXPECT_EQ(s.max_ns, 1'000'000U);
  EXPECT_EQ(s.mean_ns, (900 * 100 + 90 * 1'000 + 9 * 10'000 + 1'000'000) / 1000U);
  EXPECT_EQ(s.windows, 1U);
  EXPECT_EQ(s.torn_windows, 0U);
}

TEST_F(LatencyWindowsTest, ATakeStampedBeforeItsPublishCountsAsZero) {
  sut_.record(kBase, kBase + 500);
  const LatencySummary s = summarize_latency(*windows_, kBase);
  EXPECT_EQ(s.count, 1U);
  EXPECT_EQ(s.buckets[0], 1U);
  EXPECT_EQ(s.max_ns, 0U);
}

TEST_F(LatencyWindowsTest, SumsTheLastElevenSecondsAndForgetsOlderOnes) {
  for (int second = 0; second < 15; ++second) {
    record(kBase + (second * kSecond), 1'000 * (second + 1), 10);
  }
  // Read in second 14: seconds 4..14 count (11 windows), 0..3 aged out.
  const LatencySummary s = summarize_latency(*windows_, kBase + (14 * kSecond) + 5);
  EXPECT_EQ(s.count, 110U);
  EXPECT_EQ(s.windows, 11U);
  EXPECT_EQ(s.max_ns, 15'000U);
  EXPECT_GE(s.p50_ns, 10'000U) << "half the takes are of seconds 9..14 (10..15 us)";
  // Read 20 s later with no takes since: nothing left.
  EXPECT_EQ(summarize_latency(*windows_, kBase + (34 * kSecond)).count, 0U);
}

TEST_F(LatencyWindowsTest, AReusedWindowStartsFromZero) {
  record(kBase, 5'000'000, 50);            // second 0 uses window 0 % 11
  record(kBase + (11 * kSecond), 100, 3);  // second 11: the same window, reset first
  const LatencySummary s = summarize_latency(*windows_, kBase + (11 * kSecond) + 10);
  EXPECT_EQ(s.count, 3U);
  EXPECT_EQ(s.max_ns, 100U);
}

TEST_F(LatencyWindowsTest, AWindowBeingResetIsNotRead) {
  record(kBase, 100, 5);
  // What a reader meets between the writer's two stores of `second` in rotate().
  windows_->windows[(kBase / kSecond) % kLatencyWindows].second.store(0, std::memory_order_relaxed);
  EXPECT_EQ(summarize_latency(*windows_, kBase + 1).count, 0U);
}

}  // namespace
}  // namespace axon::shm
