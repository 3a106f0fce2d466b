// Reserved chunks across processes (issue 15): while subscribers in another
// process hold every shared chunk of a node's class, a publisher's reserved
// chunks of that class stay its own; when their holder dies they come back
// to that publisher, never to another topic of the node.
#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include "axon/axon.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/peer_domain_test.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::TestMessage;

class ReservationAcrossProcesses : public test::PeerDomainTest {
 protected:
  void TearDown() override {
    node.reset();
    EXPECT_TRUE(test::domain_files(domain).empty()) << "files left in /dev/shm";
  }
  /// Loans, fills and publishes message `seq` on `pub`; false when the loan
  /// comes back exhausted (no chunk for this topic).
  static bool publish_loaned(Publisher<TestMessage>& pub, std::uint64_t seq) {
    auto loan = pub.loan();
    if (!loan) {
      EXPECT_TRUE(loan.exhausted()) << loan.error().message();
      return false;
    }
    test::fill(**loan, 1, seq);
    EXPECT_TRUE(pub.publish(std::move(*loan)).ok());
    return true;
  }
  static const PoolTopicShare* share_of(const PoolClassStats& stats, const std::string& topic) {
    for (const auto& share : stats.topics) {
      if (share.topic == topic) {
        return &share;
      }
    }
    return nullptr;
  }
  std::shared_ptr<Node> node;
};

TEST_F(ReservationAcrossProcesses, AnotherTopicNeverTakesReservedChunksWhileSubscribersElsewhereHoldChunks) {
  NodeOptions options = test::pool_options(domain, {{.payload_bytes = sizeof(TestMessage), .count = 8}});
  options.chunk_fallback = ChunkFallback{.max_classes = 0};
  options.liveness_period_ms = 10;
  node = make_node("robot", options);
  ASSERT_NE(node, nullptr);
  auto commands =
      node->advertise<TestMessage>("cmd_vel", {.reserved_chunks = 3, .beyond_reservation = BeyondReservation::kRefuse});
  auto objects = node->advertise<TestMessage>("objects");
  ASSERT_TRUE(commands.ok()) << commands.error().message();
  ASSERT_TRUE(objects.ok()) << objects.error().message();
  auto object_holder = peer("hold", {"count=5"}, "objects");
  auto command_holder = peer("hold", {"count=3"}, "cmd_vel");
  ASSERT_TRUE(object_holder.wait_for_line("READY", 10s)) << object_holder.output();
  ASSERT_TRUE(command_holder.wait_for_line("READY", 10s)) << command_holder.output();
  ASSERT_TRUE(
      eventually([&] { return (*objects)->subscriber_count() == 1 && (*commands)->subscriber_count() == 1; }, 10s));

  // objects takes every shared chunk, and the other process holds them all.
  std::uint64_t published = 0;
  while (published < 20 && publish_loaned(**objects, published + 1)) {
    ++published;
  }
  EXPECT_EQ(published, 5U) << "8 chunks, 3 of them reserved for cmd_vel";
  ASSERT_TRUE(object_holder.wait_for_line("HOLDING 5", 10s)) << object_holder.output();
  EXPECT_FALSE(publish_loaned(**objects, 6)) << "the shared chunks are held in the other process";

  // cmd_vel still has its three, which the other process then holds too.
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    ASSERT_TRUE(publish_loaned(**commands, seq))
        << "reserved chunk " << seq << ": " << (*commands)->explain_exhausted();
  }
  ASSERT_TRUE(command_holder.wait_for_line("HOLDING 3", 10s)) << command_holder.output();
  EXPECT_FALSE(publish_loaned(**commands, 4)) << "beyond_reservation refuse: only its own three";
  const std::vector<PoolClassStats> stats = node->pool_stats();
  ASSERT_EQ(stats.size(), 1U);
  EXPECT_EQ(stats[0].free_chunks, 0U);
  EXPECT_EQ(stats[0].reserved_chunks, 3U);
  const PoolTopicShare* cmd = share_of(stats[0], "cmd_vel");
  const PoolTopicShare* obj = share_of(stats[0], "objects");
  ASSERT_TRUE(cmd != nullptr && obj != nullptr);
  EXPECT_EQ(cmd->reserved_chunks, 3U);
  EXPECT_EQ(cmd->chunks_in_use, 3U);
  EXPECT_EQ(obj->chunks_in_use, 5U);

  // The holder of cmd_vel's chunks dies: they return to cmd_vel's
  // reservation; objects, whose chunks are still held, cannot take them.
  command_holder.kill(SIGKILL);
  ASSERT_EQ(command_holder.wait(10s), 128 + SIGKILL);
  ASSERT_TRUE(eventually([&] { return (*commands)->subscriber_count() == 0; }, 10s));
  ASSERT_TRUE(eventually([&] { return share_of(node->pool_stats()[0], "cmd_vel")->chunks_in_use == 0; }, 10s))
      << "the dead holder's chunks were not given back";
  EXPECT_FALSE(publish_loaned(**objects, 6)) << "objects took a chunk reserved for cmd_vel";
  for (std::uint64_t seq = 4; seq <= 6; ++seq) {
    EXPECT_TRUE(publish_loaned(**commands, seq)) << (*commands)->explain_exhausted();
  }
}

}  // namespace
}  // namespace axon
