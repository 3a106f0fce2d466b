// Publish/subscribe between real processes (axon_test_peer).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/test_messages.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
using test::TestMessage;

class CrossProcess : public ::testing::Test {
 protected:
  ChildProcess peer(const std::string& command, std::vector<std::string> args) {
    std::vector<std::string> argv{test::peer_path(), command, "domain=" + std::to_string(domain), "topic=objects"};
    argv.insert(argv.end(), args.begin(), args.end());
    return ChildProcess::spawn(argv);
  }
  void TearDown() override {
    // Every participant has exited by now: nothing may stay in /dev/shm.
    EXPECT_TRUE(test::domain_files(domain).empty());
  }
  std::uint32_t domain = test::unique_domain();
};

TEST_F(CrossProcess, DeliversEveryMessageInOrderToASubscriberProcess) {
  auto sub = peer("subscribe", {"expect=2000", "block=1"});
  ASSERT_TRUE(sub.wait_for_line("READY", 10s));
  auto pub = peer("publish", {"count=2000", "id=7"});
  ASSERT_EQ(pub.wait(60s), 0) << pub.output();
  ASSERT_EQ(sub.wait(60s), 0) << sub.output();
  EXPECT_NE(sub.output().find("RESULT received=2000 publishers=1 errors=0"), std::string::npos) << sub.output();
}

TEST_F(CrossProcess, SeveralPublishersReachSeveralSubscribers) {
  auto sub_a = peer("subscribe", {"expect=1000", "block=1"});
  auto sub_b = peer("subscribe", {"expect=1000", "block=1"});
  ASSERT_TRUE(sub_a.wait_for_line("READY", 10s));
  ASSERT_TRUE(sub_b.wait_for_line("READY", 10s));
  auto pub_1 = peer("publish", {"count=500", "id=1", "wait_subs=2"});
  auto pub_2 = peer("publish", {"count=500", "id=2", "wait_subs=2"});
  EXPECT_EQ(pub_1.wait(60s), 0) << pub_1.output();
  EXPECT_EQ(pub_2.wait(60s), 0) << pub_2.output();
  EXPECT_EQ(sub_a.wait(60s), 0) << sub_a.output();
  EXPECT_EQ(sub_b.wait(60s), 0) << sub_b.output();
  EXPECT_NE(sub_a.output().find("publishers=2 errors=0"), std::string::npos) << sub_a.output();
  EXPECT_NE(sub_b.output().find("publishers=2 errors=0"), std::string::npos) << sub_b.output();
}

TEST_F(CrossProcess, ThisProcessReadsAnotherProcessesMessagesInPlace) {
  NodeOptions options;
  options.domain_id = domain;
  auto node = Node::create("reader", options);
  ASSERT_TRUE(node.ok());
  auto sub = node->subscribe<TestMessage>("objects", {.depth = 256, .overflow = Overflow::kBlockPublisher});
  ASSERT_TRUE(sub.ok());
  auto pub = peer("publish", {"count=300", "id=3", "linger_ms=3000"});
  std::uint64_t expected = 1;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (expected <= 300 && std::chrono::steady_clock::now() < deadline) {
    auto sample = sub->take();
    if (!sample) {
      std::this_thread::sleep_for(100us);
      continue;
    }
    EXPECT_TRUE(test::intact(**sample));
    EXPECT_EQ(sample->sequence, expected++);
  }
  EXPECT_EQ(expected, 301U);
  EXPECT_EQ(pub.wait(30s), 0) << pub.output();
}

TEST_F(CrossProcess, ALateSubscriberGetsWhatIsPublishedAfterItJoins) {
  NodeOptions options;
  options.domain_id = domain;
  auto node = Node::create("late", options);
  auto pub = node->advertise<TestMessage>("objects");
  ASSERT_TRUE(pub.ok());
  TestMessage early;
  test::fill(early, 1, 1);
  ASSERT_EQ(pub->publish(early)->delivered, 0U);
  auto sub = peer("subscribe", {"expect=50", "lossless=0"});
  ASSERT_TRUE(sub.wait_for_line("READY", 10s));
  for (std::uint64_t seq = 2; seq <= 51; ++seq) {
    TestMessage m;
    test::fill(m, 1, seq);
    ASSERT_EQ(pub->publish(m)->delivered, 1U);
  }
  ASSERT_EQ(sub.wait(30s), 0) << sub.output();
  EXPECT_NE(sub.output().find("RESULT received=50 publishers=1 errors=0"), std::string::npos);
}

TEST_F(CrossProcess, RefusesASubscriberProcessOfAnotherTypeNamingBothTypes) {
  NodeOptions options;
  options.domain_id = domain;
  auto node = Node::create("owner", options);
  auto pub = node->advertise<TestMessage>("objects");
  ASSERT_TRUE(pub.ok());
  auto other = peer("other-type", {});
  ASSERT_EQ(other.wait(30s), 0) << other.output();
  EXPECT_NE(other.output().find("axon_test::TestMessage"), std::string::npos) << other.output();
  EXPECT_NE(other.output().find("axon_test::OtherMessage"), std::string::npos) << other.output();
}

}  // namespace
}  // namespace axon
