// The chaos checks fed made-up runs: a subscriber's sequence tracking, the
// verdict on reliable streams (lost, duplicated, out of order, missing head
// or tail must FAIL), payload checksums, handlers and latency.
#include "bench/axon_bench/chaos/chaos_checks.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "bench/axon_bench/chaos/chaos_payload.hpp"

namespace axon_bench {
namespace {

using Tracker = SequenceTracker<4>;

Tracker tracked(const std::vector<std::uint64_t>& seqs, std::uint32_t publisher_incarnation = 0) {
  Tracker t;
  for (const std::uint64_t seq : seqs) {
    t.on_message(0, publisher_incarnation, seq);
  }
  return t;
}

/// A publisher incarnation that began at t=100 with its one subscriber and published `n` messages.
PublisherIncarnation published(std::uint64_t n) {
  return {.first_publish_ns = 100, .subscribers_at_start = 1, .attempted = n, .completed = n};
}

/// One reliable subscription whose one subscriber incarnation (connected at t=50, never killed) saw `t`.
ReliableInput input_of(const Tracker& t, std::vector<PublisherIncarnation> publishers) {
  ReliableInput in;
  in.label = "a -> q";
  in.streams.assign(t.streams.begin(), t.streams.begin() + t.count);
  in.overflowed = t.overflowed;
  in.publishers = std::move(publishers);
  in.subscribers = {{.connected_ns = 50, .drained_ns = 0}};
  in.subscriber_killed = {false};
  in.expected_subscribers = 1;
  return in;
}

TEST(SequenceTracker, CountsGapsDuplicatesAndReordering) {
  const Tracker sut = tracked({0, 1, 2, 5, 5, 4, 6});

  ASSERT_EQ(sut.count, 1U);
  const StreamRecord& s = sut.streams[0];
  EXPECT_EQ(s.first_seq, 0U);
  EXPECT_EQ(s.last_seq, 6U);
  EXPECT_EQ(s.received, 7U);
  EXPECT_EQ(s.lost, 2U);  // 3 and 4 skipped when 5 came (4 arriving later is out of order, not found)
  EXPECT_EQ(s.duplicates, 1U);
  EXPECT_EQ(s.out_of_order, 1U);
}

TEST(SequenceTracker, KeepsOneStreamPerPublisherIncarnation) {
  Tracker sut;
  sut.on_message(0, 0, 0);
  sut.on_message(0, 0, 1);
  sut.on_message(0, 1, 0);  // the restarted publisher counts from 0 again: not a duplicate
  sut.on_message(0, 0, 2);  // the dead one's last queued message, after the first of the new one
  sut.on_message(0, 1, 1);

  ASSERT_EQ(sut.count, 2U);
  EXPECT_EQ(sut.streams[0].received, 3U);
  EXPECT_EQ(sut.streams[1].received, 2U);
  for (std::uint32_t i = 0; i < sut.count; ++i) {
    EXPECT_EQ(sut.streams[i].lost + sut.streams[i].duplicates + sut.streams[i].out_of_order, 0U);
  }
}

TEST(SequenceTracker, CountsWhatItHasNoRoomFor) {
  Tracker sut;
  for (std::uint32_t incarnation = 0; incarnation < 6; ++incarnation) {
    sut.on_message(0, incarnation, 0);
  }

  EXPECT_EQ(sut.count, 4U);
  EXPECT_EQ(sut.overflowed, 2U);
  EXPECT_FALSE(check_reliable({input_of(sut, std::vector<PublisherIncarnation>(6, published(1)))}).pass);
}

TEST(CheckReliable, PassesAWholeStream) {
  const CheckResult sut = check_reliable({input_of(tracked({0, 1, 2, 3}), {published(4)})});

  EXPECT_TRUE(sut.pass) << sut.figure;
}

TEST(CheckReliable, FailsALostMessage) {
  const CheckResult sut = check_reliable({input_of(tracked({0, 1, 3}), {published(4)})});

  EXPECT_FALSE(sut.pass);
  EXPECT_NE(sut.figure.find("1 lost"), std::string::npos) << sut.figure;
}

TEST(CheckReliable, FailsADuplicate) {
  EXPECT_FALSE(check_reliable({input_of(tracked({0, 1, 1, 2}), {published(3)})}).pass);
}

TEST(CheckReliable, FailsOutOfOrder) {
  EXPECT_FALSE(check_reliable({input_of(tracked({0, 2, 1}), {published(3)})}).pass);
}

TEST(CheckReliable, FailsAMissingHeadWhenTheSubscriberWasThereFirst) {
  EXPECT_FALSE(check_reliable({input_of(tracked({2, 3}), {published(4)})}).pass);

  // Joined after the publisher began (a restarted subscriber): starting late is no loss.
  ReliableInput late = input_of(tracked({2, 3}), {published(4)});
  late.subscribers[0].connected_ns = 200;
  EXPECT_TRUE(check_reliable({late}).pass);
}

TEST(CheckReliable, FailsAMissingTailUnlessTheSubscriberWasKilled) {
  EXPECT_FALSE(check_reliable({input_of(tracked({0, 1}), {published(4)})}).pass);

  ReliableInput killed = input_of(tracked({0, 1}), {published(4)});
  killed.subscriber_killed = {true};
  EXPECT_TRUE(check_reliable({killed}).pass);
}

TEST(CheckReliable, AcceptsTheMessageAKillCaughtInsidePublish) {
  PublisherIncarnation killed_inside = published(3);
  killed_inside.attempted = 4;  // message 3 begun, publish() never returned

  EXPECT_TRUE(check_reliable({input_of(tracked({0, 1, 2, 3}), {killed_inside})}).pass);
  EXPECT_TRUE(check_reliable({input_of(tracked({0, 1, 2}), {killed_inside})}).pass);
  EXPECT_FALSE(check_reliable({input_of(tracked({0, 1, 2, 3, 4}), {killed_inside})}).pass);  // never sent
}

TEST(CheckReliable, FailsAPublisherIncarnationThatNeverArrived) {
  PublisherIncarnation restarted = published(5);
  restarted.first_publish_ns = 300;

  const CheckResult sut = check_reliable({input_of(tracked({0, 1, 2}), {published(3), restarted})});

  EXPECT_FALSE(sut.pass);
  EXPECT_NE(sut.figure.find("nothing of publisher #1"), std::string::npos) << sut.figure;
}

TEST(CheckReliable, FailsWhenThereIsNothingToJudge) {
  EXPECT_FALSE(check_reliable({}).pass);
  EXPECT_FALSE(check_reliable({input_of(Tracker{}, {published(0)})}).pass);
}

TEST(ChaosPayload, ChecksumCatchesAnyChangedByte) {
  alignas(8) std::byte payload[256];
  write_chaos_payload(payload, sizeof(payload), Stamp{.index = 7, .time_ns = 11}, 7, 2);

  const ChaosRead intact = read_chaos_payload(payload, sizeof(payload));
  payload[200] ^= std::byte{1};
  const ChaosRead corrupt = read_chaos_payload(payload, sizeof(payload));

  EXPECT_TRUE(intact.intact);
  EXPECT_EQ(intact.header.seq, 7U);
  EXPECT_EQ(intact.header.incarnation, 2U);
  EXPECT_FALSE(corrupt.intact);
  EXPECT_FALSE(check_intact(10, 1).pass);
  EXPECT_TRUE(check_intact(10, 0).pass);
}

TEST(CheckHandlers, FailsAMissingAndAnUnexplainedFiring) {
  EXPECT_TRUE(check_handlers("deadline", {{.label = "a", .events = 2, .expected = true, .explained = true},
                                          {.label = "b", .events = 0, .expected = false, .explained = false},
                                          {.label = "c", .events = 1, .expected = false, .explained = true}})
                  .pass);
  EXPECT_FALSE(check_handlers("deadline", {{.label = "a", .events = 0, .expected = true, .explained = true}}).pass);
  EXPECT_FALSE(check_handlers("deadline", {{.label = "b", .events = 1, .expected = false, .explained = false}}).pass);
}

TEST(CheckLatency, HoldsTheP99ToTwiceTheBaseline) {
  const auto sut = check_latency({{.label = "ok", .baseline_p99_ns = 100, .chaos_p99_ns = 200, .chaos_samples = 5},
                                  {.label = "slow", .baseline_p99_ns = 100, .chaos_p99_ns = 201, .chaos_samples = 5},
                                  {.label = "empty", .baseline_p99_ns = 100, .chaos_p99_ns = 0, .chaos_samples = 0}});

  ASSERT_EQ(sut.size(), 3U);
  EXPECT_TRUE(sut[0].pass);
  EXPECT_FALSE(sut[1].pass);
  EXPECT_FALSE(sut[2].pass);
}

TEST(CheckLatency, AddsTheSlackAskedFor) {
  const LatencyInput slow{.label = "slow", .baseline_p99_ns = 100, .chaos_p99_ns = 1'200, .chaos_samples = 5};

  EXPECT_FALSE(check_latency({slow}, 999)[0].pass);
  EXPECT_TRUE(check_latency({slow}, 1'000)[0].pass);
}

TEST(CheckLeftovers, FailsAFileOrAProcess) {
  EXPECT_TRUE(check_leftovers({}, {}).pass);
  EXPECT_FALSE(check_leftovers({"axon_d5.lock"}, {}).pass);
  EXPECT_FALSE(check_leftovers({}, {1234}).pass);
}

TEST(CheckLeftovers, FailsARuleOrNamespaceOfTheVirtualHosts) {
  EXPECT_TRUE(check_leftovers({}, {}, {}, true).pass);

  const CheckResult sut = check_leftovers({}, {}, {"host 1: iptables -A INPUT -i eth0 -j DROP"}, true);

  EXPECT_FALSE(sut.pass);
  EXPECT_NE(sut.figure.find("-A INPUT -i eth0 -j DROP"), std::string::npos) << sut.figure;
}

TEST(CheckDelivered, FailsASubscriptionThatTookNothingInEitherRun) {
  const std::vector<DeliveryInput> fine{{.label = "a -> q", .baseline_received = 10, .chaos_received = 9}};
  std::vector<DeliveryInput> silent = fine;
  silent.push_back({.label = "b -> r", .baseline_received = 0, .chaos_received = 0});

  EXPECT_TRUE(check_delivered(fine).pass);
  const CheckResult sut = check_delivered(silent);
  EXPECT_FALSE(sut.pass);
  EXPECT_NE(sut.figure.find("1 of 2 subscriptions"), std::string::npos) << sut.figure;
  EXPECT_NE(sut.figure.find("b -> r: 0 fault-free, 0 with faults"), std::string::npos) << sut.figure;
}

TEST(CheckResumed, FailsASubscriptionThatTookNothingAfterThePartitionHealed) {
  const std::vector<ResumeInput> resumed{{.label = "a -> q", .healed_s = 5, .after = 40, .first_after_s = 5.1},
                                         {.label = "b -> r", .healed_s = 5, .after = 12, .first_after_s = 5.3}};
  std::vector<ResumeInput> stuck = resumed;
  stuck[1].after = 0;
  stuck[1].first_after_s = -1;

  EXPECT_TRUE(check_resumed(resumed).pass);
  const CheckResult sut = check_resumed(stuck);
  EXPECT_FALSE(sut.pass);
  EXPECT_NE(sut.figure.find("1 of 2 subscriptions resumed"), std::string::npos) << sut.figure;
  EXPECT_NE(sut.figure.find("b -> r: nothing after 5.00 s"), std::string::npos) << sut.figure;
}

}  // namespace
}  // namespace axon_bench
