// QoS without credit between two real processes (docs/design/rdma-transport.md,
// "QoS without credit"): node 'na' (this process, host a) publishes to a
// BEST_EFFORT subscriber of node 'nb' (a peer process, host b) that is
// SIGSTOPped, so its node grants nothing while 'na' publishes. Every message
// must be accounted for where a user sees it: taken by the subscriber,
// dropped by its queue (its counters), or dropped / evicted for want of
// credit on the sender (publish()'s status, NetworkCounters). Guest only.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <string>

#include "axon/axon.hpp"
#include "tests/unit/rdma/two_hosts.hpp"

namespace axon::rdma_test {
namespace {

constexpr std::uint64_t kWhileStopped = 300;  // far more than the receiver's 8 credits

class RdmaNodeCreditOnDevice : public TwoHostsOnDevice {
 protected:
  /// Publishes until one message is written (the receiver answered and
  /// granted) and the peer took it, stops the peer, publishes
  /// kWhileStopped more, lets the peer go on; returns what publish() said.
  SentTally publish_through_a_stopped_subscriber(test::ChildProcess& peer) {
    auto node = Node::create("na", options_for(config, host_a));
    EXPECT_TRUE(node.ok()) << node.error().message();
    if (!node.ok()) {
      return {};
    }
    sender = *node;
    auto advertised = sender->advertise<Block>("rdma/blocks");
    EXPECT_TRUE(advertised.ok()) << advertised.error().message();
    if (!advertised.ok()) {
      return {};
    }
    pub = *advertised;
    EXPECT_TRUE(peer.wait_for_line("READY", kWait)) << peer.output();
    EXPECT_TRUE(wait_for_stream(*sender, "rdma/blocks")) << peer.output();
    SentTally sent;
    std::uint64_t next = 1;
    EXPECT_TRUE(publish_until_written(*pub, next, Retry::kNextSequence, sent)) << "no credit came";
    EXPECT_TRUE(wait_for_accounted(peer, 1, kWait)) << peer.output();

    EXPECT_TRUE(peer.stop(kWait));
    for (std::uint64_t k = 0; k < kWhileStopped; ++k, ++next) {
      const PublishResult published = pub->publish(block(next));
      EXPECT_TRUE(published.ok());
      if (published.ok()) {
        sent.add(published.status());
      }
    }
    peer.kill(SIGCONT);
    return sent;
  }

  std::shared_ptr<Node> sender;
  std::shared_ptr<Publisher<Block>> pub;  // lives on: a pending message is written after the peer resumes
};

TEST_F(RdmaNodeCreditOnDevice, BestEffortMessagesWithoutCreditAreDroppedAndCountedNothingLostUncounted) {
  auto peer = spawn(SubscriberPeer{.qos = "reject_newest", .depth = 4});

  const SentTally sent = publish_through_a_stopped_subscriber(peer);

  ASSERT_NE(sender, nullptr);
  EXPECT_GE(sent.dropped, kWhileStopped - 8) << "the stopped receiver granted nothing: the sender had no credit";
  EXPECT_EQ(sent.evicted + sent.timed_out, 0U);
  const NetworkCounters c = sender->network_counters();
  EXPECT_EQ(c.rdma_credit_drops, sent.dropped) << "the counter says what publish() said";
  EXPECT_EQ(c.rdma_send_failures + c.rdma_credit_evictions + c.rdma_credit_timeouts + c.rdma_link_losses, 0U);
  EXPECT_EQ(c.rdma_messages_sent + sent.dropped, sent.published) << "each message written or dropped";
  EXPECT_EQ(sent.delivered, c.rdma_messages_sent);
  // Each message written is taken or dropped by the subscriber's queue (depth 4 < 8 credits).
  const auto seen = wait_for_accounted(peer, c.rdma_messages_sent, kWait);
  ASSERT_TRUE(seen) << peer.output();
  EXPECT_EQ(accounted(*seen), c.rdma_messages_sent) << seen->line();
  EXPECT_EQ(seen->number("rdma"), c.rdma_messages_sent) << seen->line();
  EXPECT_EQ(seen->number("oldest") + seen->number("bad") + seen->number("back"), 0U) << seen->line();
  EXPECT_EQ(accounted(*seen) + sent.dropped, sent.published) << "nothing lost without being counted";
  std::printf("best effort: %llu published, %llu written (%llu taken, %llu dropped by the queue), %llu dropped\n",
              static_cast<unsigned long long>(sent.published), static_cast<unsigned long long>(c.rdma_messages_sent),
              static_cast<unsigned long long>(seen->number("got")),
              static_cast<unsigned long long>(seen->number("full")), static_cast<unsigned long long>(sent.dropped));
}

TEST_F(RdmaNodeCreditOnDevice, KeepLastMessagesWithoutCreditReplaceThePendingOneEvictedAndTheNewestArrives) {
  auto peer = spawn(SubscriberPeer{.qos = "keep_last", .depth = 4});

  const SentTally sent = publish_through_a_stopped_subscriber(peer);

  ASSERT_NE(sender, nullptr);
  EXPECT_GE(sent.evicted, kWhileStopped - 9) << "all but the credits' and the pending one evicted";
  EXPECT_EQ(sent.timed_out, 0U);
  // The pending message is written when the resumed receiver grants again.
  ASSERT_TRUE(eventually(kWait,
                         [&] {
                           const NetworkCounters c = sender->network_counters();
                           return c.rdma_messages_sent + sent.dropped + sent.evicted == sent.published;
                         }))
      << "written " << sender->network_counters().rdma_messages_sent << " of " << sent.published << ", dropped "
      << sent.dropped << ", evicted " << sent.evicted << ", send failures "
      << sender->network_counters().rdma_send_failures;
  const NetworkCounters c = sender->network_counters();
  EXPECT_EQ(c.rdma_credit_evictions, sent.evicted) << "the counter says what publish() said";
  EXPECT_EQ(c.rdma_credit_drops, sent.dropped) << "dropped only before the receiver's answer";
  EXPECT_EQ(c.rdma_send_failures + c.rdma_credit_timeouts + c.rdma_link_losses, 0U);
  const auto seen = wait_for_accounted(peer, c.rdma_messages_sent, kWait);
  ASSERT_TRUE(seen) << peer.output();
  EXPECT_EQ(accounted(*seen), c.rdma_messages_sent) << seen->line();
  EXPECT_EQ(seen->number("rdma"), c.rdma_messages_sent) << seen->line();
  EXPECT_EQ(seen->number("full") + seen->number("bad") + seen->number("back"), 0U) << seen->line();
  EXPECT_EQ(seen->number("last"), sent.published) << "keep-last: the newest message arrives";
  EXPECT_EQ(accounted(*seen) + sent.dropped + sent.evicted, sent.published) << "nothing lost without being counted";
  std::printf("keep last: %llu published, %llu written (%llu taken, %llu evicted by the queue), %llu evicted\n",
              static_cast<unsigned long long>(sent.published), static_cast<unsigned long long>(c.rdma_messages_sent),
              static_cast<unsigned long long>(seen->number("got")),
              static_cast<unsigned long long>(seen->number("oldest")), static_cast<unsigned long long>(sent.evicted));
}

}  // namespace
}  // namespace axon::rdma_test
