// The soak's verdicts on synthetic series (bench/axon_bench/soak/soak_check.hpp): flat and noisy-flat series
// pass, leaking and growing ones fail, a run too short to judge fails; and the pieces the verdicts stand on: the
// least-squares line, the per-window latency percentiles, the durations of the command line.
#include "bench/axon_bench/soak/soak_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "bench/axon_bench/scenario/window_latency.hpp"
#include "bench/axon_bench/soak/duration_text.hpp"

namespace axon_bench {
namespace {

/// One sample a second for `seconds`, each value `f(t)`.
template <class F>
void make_series(double seconds, F f, std::vector<double>& t, std::vector<double>& v) {
  for (double s = 0; s < seconds; s += 1) {
    t.push_back(s);
    v.push_back(f(s));
  }
}

SoakBounds bounds_for(double warmup_s, double reference_s) {
  SoakBounds b;
  b.warmup_s = warmup_s;
  b.reference_s = reference_s;
  return b;
}

TEST(SoakFitLine, FindsTheSlopeOfALineAndSkipsMissingSamples) {
  std::vector<double> t{0, 1, 2, 3, 4};
  std::vector<double> v{1, 3, std::nan(""), 7, 9};

  const LineFit sut = fit_line(t, v);

  EXPECT_EQ(sut.samples, 4u);
  EXPECT_NEAR(sut.slope, 2.0, 1e-12);
  EXPECT_NEAR(sut.intercept, 1.0, 1e-12);
}

TEST(SoakFitLine, GivesNoSlopeForFewerThanTwoSamples) {
  std::vector<double> t{5};
  std::vector<double> v{42};

  EXPECT_EQ(fit_line(t, v).slope, 0.0);
}

TEST(SoakMemory, PassesAFlatSeries) {
  std::vector<double> t;
  std::vector<double> v;
  make_series(
      600, [](double) { return 50'000.0; }, t, v);

  const SoakVerdict sut = judge_series(SoakRule::kMemory, t, v, bounds_for(60, 60));

  EXPECT_TRUE(sut.pass) << sut.figures;
}

TEST(SoakMemory, PassesANoisyFlatSeries) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> jitter(-300, 300);  // KiB: pages coming and going
  std::vector<double> t;
  std::vector<double> v;
  make_series(
      7200, [&](double) { return 80'000.0 + jitter(random); }, t, v);

  const SoakVerdict sut = judge_series(SoakRule::kMemory, t, v, bounds_for(720, 600));

  EXPECT_TRUE(sut.pass) << sut.figures;
}

TEST(SoakMemory, PassesOneAllocatorStepInAShortRun) {
  std::vector<double> t;
  std::vector<double> v;
  make_series(
      300, [](double s) { return s < 180 ? 20'000.0 : 20'132.0; }, t, v);  // one 132 KiB heap extension

  const SoakVerdict sut = judge_series(SoakRule::kMemory, t, v, bounds_for(60, 60));

  EXPECT_TRUE(sut.pass) << sut.figures;
}

TEST(SoakMemory, FailsALeak) {
  std::vector<double> t;
  std::vector<double> v;
  make_series(
      7200, [](double s) { return 80'000.0 + s * 1.0; }, t, v);  // 1 KiB a second: 60 KiB/min

  const SoakVerdict sut = judge_series(SoakRule::kMemory, t, v, bounds_for(720, 600));

  EXPECT_FALSE(sut.pass) << sut.figures;
}

TEST(SoakMemory, FailsALeakHiddenInNoise) {
  std::mt19937 random(11);
  std::uniform_real_distribution<double> jitter(-300, 300);
  std::vector<double> t;
  std::vector<double> v;
  make_series(
      300, [&](double s) { return 20'000.0 + s * 20 + jitter(random); }, t, v);  // 1.2 MiB/min

  const SoakVerdict sut = judge_series(SoakRule::kMemory, t, v, bounds_for(60, 60));

  EXPECT_FALSE(sut.pass) << sut.figures;
}

TEST(SoakMemory, FailsARunWithNothingAfterTheReferenceWindow) {
  std::vector<double> t;
  std::vector<double> v;
  make_series(
      100, [](double) { return 1000.0; }, t, v);

  EXPECT_FALSE(judge_series(SoakRule::kMemory, t, v, bounds_for(60, 60)).pass);
}

TEST(SoakNoGrowth, PassesATransientDescriptor) {
  std::vector<double> t;
  std::vector<double> v;
  make_series(
      300, [](double s) { return s == 225 || s == 290 ? 17.0 : 16.0; }, t, v);  // open for one sample each

  const SoakVerdict sut = judge_series(SoakRule::kNoGrowth, t, v, bounds_for(60, 60));

  EXPECT_TRUE(sut.pass) << sut.figures;
}

TEST(SoakNoGrowth, FailsOneDescriptorMoreForGood) {
  std::vector<double> t;
  std::vector<double> v;
  make_series(
      300, [](double s) { return s >= 200 ? 41.0 : 40.0; }, t, v);

  const SoakVerdict sut = judge_series(SoakRule::kNoGrowth, t, v, bounds_for(60, 60));

  EXPECT_FALSE(sut.pass) << sut.figures;
}

TEST(SoakNoGrowth, FailsACountThatClimbsUnderItsTransients) {
  std::vector<double> t;
  std::vector<double> v;
  // One mapping more every 10 minutes, with transients of 3 more every 7 s.
  make_series(
      7200, [](double s) { return 100.0 + std::floor(s / 600) + (static_cast<int>(s) % 7 == 0 ? 3 : 0); }, t, v);

  EXPECT_FALSE(judge_series(SoakRule::kNoGrowth, t, v, bounds_for(720, 600)).pass);
}

TEST(SoakNoGrowth, IgnoresTheWarmUp) {
  std::vector<double> t;
  std::vector<double> v;
  make_series(
      300, [](double s) { return s < 30 ? 5.0 : 12.0; }, t, v);  // threads started during the warm-up

  EXPECT_TRUE(judge_series(SoakRule::kNoGrowth, t, v, bounds_for(60, 60)).pass);
}

TEST(SoakNoLoss, PassesFreeChunksThatComeBack) {
  std::vector<double> t;
  std::vector<double> v;
  make_series(
      300, [](double s) { return static_cast<int>(s) % 3 == 0 ? 48.0 : 46.0; }, t, v);  // in flight

  const SoakVerdict sut = judge_series(SoakRule::kNoLoss, t, v, bounds_for(60, 60));

  EXPECT_TRUE(sut.pass) << sut.figures;
}

TEST(SoakNoLoss, FailsAChunkThatNeverComesBack) {
  std::vector<double> t;
  std::vector<double> v;
  make_series(
      300, [](double s) { return (static_cast<int>(s) % 3 == 0 ? 48.0 : 46.0) - (s > 150 ? 1 : 0); }, t, v);

  const SoakVerdict sut = judge_series(SoakRule::kNoLoss, t, v, bounds_for(60, 60));

  EXPECT_FALSE(sut.pass) << sut.figures;
}

/// `windows` windows of `messages` messages each.
std::vector<std::uint64_t> counts(std::size_t windows, std::uint64_t messages = 6000) {
  return std::vector<std::uint64_t>(windows, messages);
}

TEST(SoakLatency, PassesAFlatP99) {
  const std::vector<double> p99{90e3, 80e3, 85e3, 95e3, 88e3};

  const SoakVerdict sut = judge_latency(p99, counts(5), 60, bounds_for(60, 60));

  EXPECT_TRUE(sut.pass) << sut.figures;
  EXPECT_TRUE(sut.judged);
}

TEST(SoakLatency, FailsAP99ThatDrifts) {
  const std::vector<double> p99{400e3, 500e3, 800e3, 1200e3, 1600e3};  // 0.5 ms -> 1.6 ms: over 2x and +0.5 ms

  const SoakVerdict sut = judge_latency(p99, counts(5), 60, bounds_for(60, 60));

  EXPECT_FALSE(sut.pass) << sut.figures;
}

TEST(SoakLatency, PassesOneSlowLastWindowThatTheWindowBeforeItDoesNotShare) {
  // A 50 Hz topic of a 5-minute run on two cores (planning/trajectory, 2026-12-06): the p99 of 3000 messages is
  // the 30th slowest, and one scheduling hiccup moved it to 1 ms in the last window. No trend: noise.
  const std::vector<double> p99{562e3, 266e3, 596e3, 282e3, 1000e3};

  const SoakVerdict sut = judge_latency(p99, counts(5, 3000), 60, bounds_for(60, 60));

  EXPECT_TRUE(sut.pass) << sut.figures;
}

TEST(SoakLatency, FailsAP99ThatRisesInTheLastTwoWindows) {
  const std::vector<double> p99{100e3, 100e3, 120e3, 700e3, 900e3};  // both last windows over +0.5 ms

  const SoakVerdict sut = judge_latency(p99, counts(5), 60, bounds_for(60, 60));

  EXPECT_FALSE(sut.pass) << sut.figures;
}

TEST(SoakLatency, JudgesTheLastWindowAloneWhenOnlyTheReferenceIsBeforeIt) {
  const std::vector<double> p99{100e3, 100e3, 900e3};

  EXPECT_FALSE(judge_latency(p99, counts(3), 60, bounds_for(60, 60)).pass);
}

TEST(SoakLatency, PassesAMicrosecondP99ThatMovesLessThanTheFloor) {
  const std::vector<double> p99{100e3, 80e3, 90e3, 120e3, 400e3};  // 5x, but 320 us: scheduling noise

  EXPECT_TRUE(judge_latency(p99, counts(5), 60, bounds_for(60, 60)).pass);
}

TEST(SoakLatency, LeavesWindowsOfTooFewMessagesNotJudged) {
  const std::vector<double> p99{400e3, 500e3, 800e3, 1200e3, 1600e3};

  const SoakVerdict sut = judge_latency(p99, counts(5, 100), 60, bounds_for(60, 60));

  EXPECT_TRUE(sut.pass) << sut.figures;
  EXPECT_FALSE(sut.judged);
}

TEST(SoakLatency, FailsWithoutTwoWindowsAfterTheWarmUp) {
  const std::vector<double> p99{10e3, 10e3};

  EXPECT_FALSE(judge_latency(p99, counts(2), 60, bounds_for(60, 60)).pass);
}

TEST(SoakLatency, FailsAWindowWithoutMessages) {
  const std::vector<double> p99{10e3, 10e3, 10e3, std::nan("")};

  EXPECT_FALSE(judge_latency(p99, counts(4), 60, bounds_for(60, 60)).pass);
}

TEST(WindowLatency, GivesPercentilesAsBucketEdgesAndTheExactMax) {
  WindowLatency a{};
  WindowLatency b{};
  for (int i = 0; i < 990; ++i) {
    a.add(10'000);  // 10 us
  }
  for (int i = 0; i < 10; ++i) {
    b.add(1'000'000);  // 1 ms
  }
  b.add(1'234'567);
  const WindowLatency* windows[] = {&a, &b};

  const WindowPercentiles sut = window_percentiles(windows);

  EXPECT_EQ(sut.count, 1001u);
  EXPECT_GE(sut.p50_ns, 10'000);
  EXPECT_LT(sut.p50_ns, 10'000 * 1.06);
  EXPECT_GE(sut.p999_ns, 1'000'000);
  EXPECT_EQ(sut.max_ns, 1'234'567);
}

TEST(WindowLatency, PutsNegativeAndHugeLatenciesInTheEndBuckets) {
  EXPECT_EQ(WindowLatency::bucket_of(-5), 0u);
  EXPECT_EQ(WindowLatency::bucket_of(int64_t{1} << 62), std::size_t{kWindowLatencyBuckets - 1});
}

TEST(SoakDuration, ReadsSecondsMinutesAndHours) {
  EXPECT_EQ(parse_duration_s("300"), 300.0);
  EXPECT_EQ(parse_duration_s("90s"), 90.0);
  EXPECT_EQ(parse_duration_s("5m"), 300.0);
  EXPECT_EQ(parse_duration_s("2h"), 7200.0);
}

TEST(SoakDuration, RejectsWhatIsNotADuration) {
  EXPECT_FALSE(parse_duration_s(""));
  EXPECT_FALSE(parse_duration_s("5x"));
  EXPECT_FALSE(parse_duration_s("-1"));
  EXPECT_FALSE(parse_duration_s("0"));
  EXPECT_FALSE(parse_duration_s("m"));
}

}  // namespace
}  // namespace axon_bench
