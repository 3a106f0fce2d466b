// The delayer's plan (bench/axon_bench/net_delay/delay_plan.hpp): which packet
// goes when for the chaos delay and reorder faults, given delay, jitter,
// percent and seed, and the order the held packets go in. The netlink I/O
// (axon-net-delay) is not here: bench.chaos_net runs it.
#include "bench/axon_bench/net_delay/delay_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace axon_bench {
namespace {

constexpr std::int64_t kMs = 1'000'000;

/// Packets 0..count-1 arriving one every `gap_ns` through `plan` and a HeldPackets, as the delayer runs them: each
/// goes at once or is held, and what is due goes at every arrival and at the end. Returns the ids in the order
/// they went.
std::vector<std::uint32_t> run_packets(DelayPlan& plan, std::uint32_t count, std::int64_t gap_ns) {
  HeldPackets held;
  std::vector<std::uint32_t> sent;
  for (std::uint32_t id = 0; id < count; ++id) {
    const std::int64_t now = static_cast<std::int64_t>(id) * gap_ns;
    held.take_due(now, sent);
    const std::int64_t release = plan.release_ns(now);
    if (release <= now) {
      sent.push_back(id);
    } else {
      held.hold(id, release);
    }
  }
  held.take_all(sent);
  return sent;
}

TEST(DelayPlan, HoldsEveryPacketForTheDelayWithoutJitter) {
  DelayPlan sut({.delay_ms = 20, .seed = 1});

  for (std::int64_t arrival = 0; arrival < 100 * kMs; arrival += kMs) {
    EXPECT_EQ(sut.release_ns(arrival), arrival + (20 * kMs));
  }
}

TEST(DelayPlan, DrawsTheJitterUniformlyWithinPlusMinus) {
  DelayPlan sut({.delay_ms = 20, .jitter_ms = 5, .seed = 7});
  std::int64_t least = INT64_MAX;
  std::int64_t most = 0;
  double sum = 0;
  constexpr int kPackets = 10000;

  for (int i = 0; i < kPackets; ++i) {
    const std::int64_t delay = sut.release_ns(0);
    least = std::min(least, delay);
    most = std::max(most, delay);
    sum += static_cast<double>(delay);
  }

  EXPECT_GE(least, 15 * kMs);
  EXPECT_LE(most, 25 * kMs);
  EXPECT_LT(least, 15 * kMs + (kMs / 10));  // the whole range is used
  EXPECT_GT(most, 25 * kMs - (kMs / 10));
  EXPECT_NEAR(sum / kPackets / kMs, 20.0, 0.2);
}

TEST(DelayPlan, TheSameSeedGivesTheSameDelays) {
  DelayPlan first({.delay_ms = 20, .jitter_ms = 5, .seed = 3});
  DelayPlan again({.delay_ms = 20, .jitter_ms = 5, .seed = 3});
  DelayPlan other({.delay_ms = 20, .jitter_ms = 5, .seed = 4});
  int differ = 0;

  for (int i = 0; i < 100; ++i) {
    const std::int64_t delay = first.release_ns(0);
    EXPECT_EQ(again.release_ns(0), delay);
    differ += other.release_ns(0) != delay ? 1 : 0;
  }

  EXPECT_GT(differ, 90);
}

TEST(DelayPlan, ReorderSendsThePercentAtOnceAndDelaysTheOthersByTheDelay) {
  DelayPlan sut({.delay_ms = 10, .immediate_percent = 25, .seed = 11});
  int at_once = 0;
  constexpr int kPackets = 20000;

  for (int i = 0; i < kPackets; ++i) {
    const std::int64_t arrival = static_cast<std::int64_t>(i) * kMs;
    const std::int64_t release = sut.release_ns(arrival);
    if (release == arrival) {
      ++at_once;
    } else {
      EXPECT_EQ(release, arrival + (10 * kMs));
    }
  }

  EXPECT_NEAR(100.0 * at_once / kPackets, 25.0, 1.0);
}

TEST(DelayPlan, ReorderedPacketsOvertakeTheDelayedOnesWhichKeepTheirOrder) {
  DelayPlan sut({.delay_ms = 10, .immediate_percent = 25, .seed = 5});

  const std::vector<std::uint32_t> sent = run_packets(sut, 1000, kMs);  // one every 1 ms: 10 in flight

  ASSERT_EQ(sent.size(), 1000U);
  std::vector<std::uint32_t> sorted = sent;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());  // each once
  EXPECT_EQ(sorted.back(), 999U);
  // Replayed: which went at once, and the delayed ones in arrival order.
  DelayPlan replay({.delay_ms = 10, .immediate_percent = 25, .seed = 5});
  std::vector<bool> immediate(1000);
  for (std::uint32_t id = 0; id < 1000; ++id) {
    immediate[id] = replay.release_ns(static_cast<std::int64_t>(id) * kMs) == static_cast<std::int64_t>(id) * kMs;
  }
  std::vector<std::uint32_t> delayed;
  std::size_t overtaking = 0;  // immediate packets sent before an earlier packet
  std::uint32_t lowest_after = UINT32_MAX;
  for (std::size_t i = sent.size(); i-- > 0;) {
    if (!immediate[sent[i]]) {
      delayed.insert(delayed.begin(), sent[i]);
    } else if (lowest_after < sent[i]) {
      ++overtaking;
    }
    lowest_after = std::min(lowest_after, sent[i]);
  }
  EXPECT_TRUE(std::is_sorted(delayed.begin(), delayed.end()));
  EXPECT_GT(overtaking, 200U);  // about every immediate one (a quarter of 1000): 10 delayed ones are in flight
}

TEST(DelayPlan, JitterReordersPacketsCloserThanItAsNetemDoes) {
  DelayPlan sut({.delay_ms = 20, .jitter_ms = 5, .seed = 9});

  const std::vector<std::uint32_t> sent = run_packets(sut, 500, kMs);

  ASSERT_EQ(sent.size(), 500U);
  EXPECT_FALSE(std::is_sorted(sent.begin(), sent.end()));
}

TEST(HeldPackets, GivesTheDuePacketsEarliestFirstAndEqualTimesInArrivalOrder) {
  HeldPackets sut;
  sut.hold(1, 30);
  sut.hold(2, 10);
  sut.hold(3, 20);
  sut.hold(4, 10);
  std::vector<std::uint32_t> due;

  sut.take_due(20, due);

  EXPECT_EQ(due, (std::vector<std::uint32_t>{2, 4, 3}));
  ASSERT_EQ(sut.size(), 1U);
  EXPECT_EQ(sut.next_release_ns(), 30);
}

TEST(HeldPackets, TakesNothingBeforeItIsDue) {
  HeldPackets sut;
  sut.hold(1, 30);
  std::vector<std::uint32_t> due;

  sut.take_due(29, due);

  EXPECT_TRUE(due.empty());
  EXPECT_FALSE(sut.empty());
}

TEST(HeldPackets, LetsEverythingGoInReleaseOrderWhenToldToStop) {
  HeldPackets sut;
  sut.hold(7, 5000);
  sut.hold(8, 100);
  sut.hold(9, 2500);
  std::vector<std::uint32_t> all;

  sut.take_all(all);

  EXPECT_EQ(all, (std::vector<std::uint32_t>{8, 9, 7}));
  EXPECT_TRUE(sut.empty());
}

}  // namespace
}  // namespace axon_bench
