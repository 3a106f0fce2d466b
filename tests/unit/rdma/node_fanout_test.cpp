// Local fan-out on the receiving host: three subscriber processes of one
// topic on host b, each its own node (nb1, nb2, nb3, one shared-memory
// directory), and node 'na' (this process, host a) publishing RELIABLE
// messages. The stream crosses once per host: the node holding host b's
// receiver lock for the topic (udp::LocalTopics, the first to subscribe)
// takes the writes and publishes them through its mirror, from which all
// three read in place. Guest only.
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <vector>

#include "axon/axon.hpp"
#include "tests/unit/rdma/two_hosts.hpp"

namespace axon::rdma_test {
namespace {

const std::vector<std::string> kReceivers{"nb1", "nb2", "nb3"};

class RdmaNodeFanOutOnDevice : public TwoHostsOnDevice {
 protected:
  [[nodiscard]] std::string yaml() const override { return deployment(kReceivers); }
};

TEST_F(RdmaNodeFanOutOnDevice, EverySubscriberOfTheReceivingHostGetsEveryReliableMessageWrittenOnceToTheHost) {
  constexpr std::uint64_t kCount = 300;
  auto node = Node::create("na", options_for(config, host_a));
  ASSERT_TRUE(node.ok()) << node.error().message();
  auto pub = (*node)->advertise<Block>("rdma/blocks");
  ASSERT_TRUE(pub.ok()) << pub.error().message();
  std::vector<test::ChildProcess> peers;
  for (const std::string& name : kReceivers) {
    // READY once connected to the mirror: none misses the first message.
    peers.push_back(spawn(SubscriberPeer{.node = name, .count = kCount, .slow = 20, .wait_publisher = true}));
  }
  for (test::ChildProcess& peer : peers) {
    ASSERT_TRUE(peer.wait_for_line("READY", kWait)) << peer.output();
  }
  ASSERT_TRUE(wait_for_stream(**node, "rdma/blocks")) << peers[0].output();

  SentTally sent;
  std::uint64_t next = 1;
  ASSERT_TRUE(publish_until_written(**pub, next, Retry::kSameSequence, sent)) << "no credit came";
  const std::uint64_t dropped_before_the_answer = sent.dropped;
  for (; next <= kCount; ++next) {
    const PublishResult published = (*pub)->publish(block(next));
    ASSERT_TRUE(published.ok()) << "sequence " << next;
    sent.add(published.status());
  }

  std::uint64_t written_to_host_b = 0;
  for (test::ChildProcess& peer : peers) {
    const auto line = peer.wait_for_line("GOT", milliseconds(60000));
    ASSERT_TRUE(line) << peer.output();
    const test::PeerSummary seen(*line);
    EXPECT_EQ(seen.number("got"), kCount) << *line;
    EXPECT_EQ(seen.number("bad") + seen.number("gaps") + seen.number("back"), 0U) << *line;
    const std::uint64_t received = seen.number("rdma");
    EXPECT_TRUE(received == 0 || received == kCount) << "one node receives the host's stream: " << *line;
    written_to_host_b += received;
  }
  EXPECT_EQ(written_to_host_b, kCount) << "the stream crossed once to host b, not once per subscriber";
  EXPECT_EQ(sent.dropped, dropped_before_the_answer) << "RELIABLE: nothing dropped once the receiver answered";
  const NetworkCounters c = (*node)->network_counters();
  EXPECT_EQ(c.rdma_messages_sent, kCount);
  EXPECT_EQ(c.rdma_streams_sent, 1U);
  EXPECT_EQ(c.messages_sent, 0U) << "nothing of the topic went by UDP";
  for (test::ChildProcess& peer : peers) {
    peer.kill(SIGKILL);
    EXPECT_EQ(peer.wait(kWait), 128 + SIGKILL);
  }
}

}  // namespace
}  // namespace axon::rdma_test
