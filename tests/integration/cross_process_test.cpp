// Publish/subscribe between real processes (axon_test_peer).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/peer_domain_test.hpp"
#include "tests/support/test_messages.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::TestMessage;

class CrossProcess : public test::PeerDomainTest {
 protected:
  void TearDown() override {
    // Every participant has exited by now: nothing may stay in /dev/shm.
    EXPECT_TRUE(test::domain_files(domain).empty());
  }
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
  auto node = make_node("reader");
  ASSERT_TRUE(node);
  auto sub = node->subscribe<TestMessage>("objects", {.depth = 256, .overflow = Overflow::kBlockPublisher});
  ASSERT_TRUE(sub.ok());
  auto pub = peer("publish", {"count=300", "id=3", "linger_ms=3000"});
  EXPECT_EQ(test::take_in_order(**sub, 300, 30s), 301U);
  EXPECT_EQ(pub.wait(30s), 0) << pub.output();
}

TEST_F(CrossProcess, ALateSubscriberGetsWhatIsPublishedAfterItJoins) {
  auto node = make_node("late");
  auto pub = node->advertise<TestMessage>("objects");
  ASSERT_TRUE(pub.ok());
  TestMessage early;
  test::fill(early, 1, 1);
  ASSERT_EQ(pub->publish(early)->delivered, 0U);
  // LINKED, not READY: a subscriber may exist before it could map our pool
  // (its service thread fetches it), and only a connected one is delivered to.
  auto sub = peer("subscribe", {"expect=50", "lossless=0", "wait_pubs=1"});
  ASSERT_TRUE(sub.wait_for_line("LINKED", 10s)) << sub.output();
  for (std::uint64_t seq = 2; seq <= 51; ++seq) {
    TestMessage m;
    test::fill(m, 1, seq);
    ASSERT_EQ(pub->publish(m)->delivered, 1U);
  }
  ASSERT_EQ(sub.wait(30s), 0) << sub.output();
  EXPECT_NE(sub.output().find("RESULT received=50 publishers=1 errors=0"), std::string::npos);
}

TEST_F(CrossProcess, RefusesASubscriberProcessOfAnotherTypeNamingBothTypes) {
  auto node = make_node("owner");
  auto pub = node->advertise<TestMessage>("objects");
  ASSERT_TRUE(pub.ok());
  auto other = peer("other-type", {});
  ASSERT_EQ(other.wait(30s), 0) << other.output();
  EXPECT_NE(other.output().find("axon_test::TestMessage"), std::string::npos) << other.output();
  EXPECT_NE(other.output().find("axon_test::OtherMessage"), std::string::npos) << other.output();
}

}  // namespace
}  // namespace axon
