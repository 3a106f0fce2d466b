// Topics between two real processes over RDMA (`transport: rdma`): this
// process, node 'na' on host a (10.0.2.15), publishes; a peer process (this
// binary exec'd again as RdmaNodeDataPeer.Subscribes, subscriber_peer.cpp),
// node 'nb' on host b (10.0.2.16), subscribes. Each host has its own
// shared-memory directory, as two machines would (two_hosts.hpp). Every
// message is written by the publishing node's card into a chunk of the
// subscribing node's pool, and read there in place.
// Guest only (ctest rdma.softroce_devices; softroce_stage.sh adds 10.0.2.16).
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include "axon/axon.hpp"
#include "tests/unit/rdma/two_hosts.hpp"

namespace axon::rdma_test {
namespace {

class RdmaNodeDataOnDevice : public TwoHostsOnDevice {
 protected:
  test::ChildProcess spawn_subscriber(const std::string& topic, std::uint64_t count, std::uint64_t slow) {
    return spawn(SubscriberPeer{.topic = topic, .count = count, .slow = slow});
  }

  /// Publishes blocks 1..count: the first again until it is written (the
  /// receiver's answer), then the rest once each; `dropped`: what the
  /// statuses of the rest said was dropped.
  static void publish_all_blocks(Publisher<Block>& pub, std::uint64_t count, SentTally& first, std::uint64_t& dropped) {
    std::uint64_t next = 1;
    ASSERT_TRUE(publish_until_written(pub, next, Retry::kSameSequence, first)) << "no credit came";
    dropped += publish_blocks(pub, next, count);
    ASSERT_FALSE(::testing::Test::HasFailure()) << "a loan or publish failed";
  }

  /// The peer's "GOT" line says `count` messages taken whole and in order.
  static void expect_all_in_order(test::ChildProcess& peer, std::uint64_t count, milliseconds timeout) {
    const auto line = peer.wait_for_line("GOT", timeout);
    ASSERT_TRUE(line) << peer.output();
    const test::PeerSummary seen(*line);
    EXPECT_EQ(seen.number("got"), count) << *line;
    EXPECT_EQ(seen.number("bad") + seen.number("gaps") + seen.number("back"), 0U) << *line;
    EXPECT_EQ(seen.number("rdma"), count) << *line;
  }
};

TEST_F(RdmaNodeDataOnDevice, ReliableBlocksArriveIntactAndInOrderThroughASlowSubscriber) {
  auto node = Node::create("na", options_for(config, host_a));
  ASSERT_TRUE(node.ok()) << node.error().message();
  EXPECT_EQ((*node)->transport_for("rdma/blocks"), TransportKind::kRdma);
  auto pub = (*node)->advertise<Block>("rdma/blocks");
  ASSERT_TRUE(pub.ok()) << pub.error().message();
  constexpr std::uint64_t kCount = 2000;
  auto peer = spawn_subscriber("rdma/blocks", kCount, 200);
  ASSERT_TRUE(peer.wait_for_line("READY", kWait)) << peer.output();
  ASSERT_TRUE(wait_for_stream(**node, "rdma/blocks")) << peer.output();

  const auto started = Clock::now();
  SentTally first;  // its drops: before the receiver's answer
  std::uint64_t dropped = 0;
  ASSERT_NO_FATAL_FAILURE(publish_all_blocks(**pub, kCount, first, dropped));
  const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - started).count();

  expect_all_in_order(peer, kCount, milliseconds(60000));
  EXPECT_EQ(dropped, 0U) << "a RELIABLE subscriber lost messages for want of credit";
  const NetworkCounters c = (*node)->network_counters();
  EXPECT_EQ(c.rdma_messages_sent, kCount);
  EXPECT_EQ(c.rdma_bytes_sent, kCount * sizeof(Block));
  EXPECT_EQ(c.rdma_credit_drops, first.dropped) << "only before the receiver's answer";
  EXPECT_EQ(c.rdma_credit_timeouts + c.rdma_send_failures, 0U);
  EXPECT_EQ(c.messages_sent, 0U) << "nothing of the topic went by UDP";
  std::printf("rdma node data: %llu x %zu B reliable in %lld ms through a subscriber slow for the first 200\n",
              static_cast<unsigned long long>(kCount), sizeof(Block), static_cast<long long>(took));
  peer.kill(SIGKILL);
  EXPECT_EQ(peer.wait(kWait), 128 + SIGKILL);
}

// A subscriber that busy-spins polls its node's completion queue itself
// (RdmaWaitSource, CompletionTurn): its thread, not the RDMA thread, hands
// completions to the links, and every message still arrives whole and in order.
TEST_F(RdmaNodeDataOnDevice, ABusySpinningSubscriberPollsTheCompletionQueueItself) {
  auto node = Node::create("na", options_for(config, host_a));
  ASSERT_TRUE(node.ok()) << node.error().message();
  auto pub = (*node)->advertise<Block>("rdma/blocks");
  ASSERT_TRUE(pub.ok()) << pub.error().message();
  constexpr std::uint64_t kCount = 300;
  auto peer = spawn(SubscriberPeer{.topic = "rdma/blocks", .count = kCount, .busy_spin = true});
  ASSERT_TRUE(peer.wait_for_line("READY", kWait)) << peer.output();
  ASSERT_TRUE(wait_for_stream(**node, "rdma/blocks")) << peer.output();

  SentTally first;  // its drops: before the receiver's answer
  std::uint64_t dropped = 0;
  ASSERT_NO_FATAL_FAILURE(publish_all_blocks(**pub, kCount, first, dropped));

  const auto line = peer.wait_for_line("GOT", milliseconds(60000));
  ASSERT_TRUE(line) << peer.output();
  const test::PeerSummary seen(*line);
  EXPECT_EQ(seen.number("got"), kCount) << *line;
  EXPECT_EQ(seen.number("bad") + seen.number("gaps") + seen.number("back"), 0U) << *line;
  EXPECT_EQ(dropped, 0U) << "a RELIABLE subscriber lost messages for want of credit";
  EXPECT_GT(seen.number("spun"), 0U) << "the spinning subscriber's thread handled no completion itself: " << *line;
  peer.kill(SIGKILL);
  EXPECT_EQ(peer.wait(kWait), 128 + SIGKILL);
}

TEST_F(RdmaNodeDataOnDevice, SixteenMebibyteMessagesOfAnAutoTopicArriveWholeInOneWriteEach) {
  auto node = Node::create("na", options_for(config, host_a));
  ASSERT_TRUE(node.ok()) << node.error().message();
  EXPECT_EQ((*node)->transport_for("rdma/frames"), TransportKind::kRdma) << "auto, and both hosts have a device";
  auto pub = (*node)->advertise<Slice<std::uint8_t>>("rdma/frames", PublisherQos{.max_payload_bytes = kLarge});
  ASSERT_TRUE(pub.ok()) << pub.error().message();
  constexpr std::uint64_t kCount = 12;
  auto peer = spawn_subscriber("rdma/frames", kCount, 0);
  ASSERT_TRUE(peer.wait_for_line("READY", kWait)) << peer.output();
  ASSERT_TRUE(wait_for_stream(**node, "rdma/frames")) << "peer: " << peer.output();

  std::uint64_t dropped = 0;
  const auto until = Clock::now() + kWait;
  for (std::uint64_t seq = 1; seq <= kCount;) {
    const std::size_t length = kLarge - seq;
    LoanResult<Loan<Slice<std::uint8_t>>> loan = (*pub)->loan(length);
    for (int tries = 0; !loan.ok() && loan.exhausted() && tries < 2000; ++tries) {
      std::this_thread::sleep_for(milliseconds(1));  // both 16 MiB chunks still pinned by their writes
      loan = (*pub)->loan(length);
    }
    ASSERT_TRUE(loan.ok()) << "sequence " << seq;
    std::span<std::uint8_t> bytes = **loan;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = static_cast<std::uint8_t>(seq + i);
    }
    const PublishResult published = (*pub)->publish(std::move(*loan));
    ASSERT_TRUE(published.ok()) << "sequence " << seq;
    if (seq == 1 && published.status().delivered == 0 && Clock::now() < until) {
      continue;  // dropped before the receiver's answer: the first one again
    }
    dropped += published.status().dropped;
    ++seq;
  }
  expect_all_in_order(peer, kCount, milliseconds(60000));
  EXPECT_EQ(dropped, 0U);
  const NetworkCounters c = (*node)->network_counters();
  EXPECT_EQ(c.rdma_messages_sent, kCount);
  peer.kill(SIGKILL);
  EXPECT_EQ(peer.wait(kWait), 128 + SIGKILL);
}

TEST_F(RdmaNodeDataOnDevice, AKilledSubscriberIsLostTheSendersChunksComeBackAndARestartedOneReceivesAgain) {
  // The restarted subscriber's participant becomes host b's receiver of the
  // topic once the killed one's is lost to heartbeats (1 s here).
  config = dir.write("deployment.yaml", deployment({"nb"}, 1000));
  auto node = Node::create("na", options_for(config, host_a));
  ASSERT_TRUE(node.ok()) << node.error().message();
  const std::uint64_t free_at_start = free_chunks(**node);
  auto advertised = (*node)->advertise<Block>("rdma/blocks");
  ASSERT_TRUE(advertised.ok()) << advertised.error().message();
  std::shared_ptr<Publisher<Block>> pub = *advertised;
  auto first = spawn_subscriber("rdma/blocks", 1'000'000, 0);
  ASSERT_TRUE(first.wait_for_line("READY", kWait)) << first.output();
  ASSERT_TRUE(wait_for_stream(**node, "rdma/blocks")) << "peer: " << first.output();
  SentTally sent;
  std::uint64_t next = 1;
  ASSERT_TRUE(publish_until_written(*pub, next, Retry::kSameSequence, sent)) << "no credit came";
  for (std::uint64_t seq = next; seq <= 100; ++seq) {
    ASSERT_TRUE(pub->publish(block(seq)).ok());
  }
  first.kill(SIGKILL);
  EXPECT_EQ(first.wait(kWait), 128 + SIGKILL);
  ASSERT_TRUE(eventually(kWait, [&] { return (*node)->network_counters().rdma_link_losses == 1; }));
  // Publishing on while the peer is gone: nothing to write to, nothing held.
  for (std::uint64_t seq = 101; seq <= 200; ++seq) {
    ASSERT_TRUE(pub->publish(block(seq)).ok());
  }
  pub.reset();  // its reuse cache goes back to the pool; a chunk still pinned by a write would not
  EXPECT_EQ(free_chunks(**node), free_at_start) << "chunks still held after the link to the killed peer was lost";

  auto again = (*node)->advertise<Block>("rdma/blocks");
  ASSERT_TRUE(again.ok()) << again.error().message();
  auto second = spawn_subscriber("rdma/blocks", 50, 0);
  ASSERT_TRUE(second.wait_for_line("READY", kWait)) << second.output();
  ASSERT_TRUE(eventually(kWait, [&] { return (*node)->network_counters().rdma_links_up == 1; }));
  ASSERT_TRUE(eventually(kWait, [&] { return (*node)->network_counters().rdma_streams_sent >= 2; }));
  next = 1;
  ASSERT_TRUE(publish_until_written(**again, next, Retry::kSameSequence, sent)) << "no credit came";
  for (std::uint64_t seq = next; seq <= 50; ++seq) {
    ASSERT_TRUE((*again)->publish(block(seq)).ok());
  }
  expect_all_in_order(second, 50, milliseconds(30000));
  second.kill(SIGKILL);
  EXPECT_EQ(second.wait(kWait), 128 + SIGKILL);
}

}  // namespace
}  // namespace axon::rdma_test
