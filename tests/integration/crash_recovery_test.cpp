// A participant killed with SIGKILL at the worst moments: the survivors get
// every chunk back and keep working, and nothing stays in /dev/shm.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/peer_domain_test.hpp"
#include "tests/support/test_messages.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::TestMessage;

/// Mappings of this process whose name contains `text` (memfd pools appear
/// as "/memfd:axon_pool_d<domain>_<node> (deleted)").
int mappings_containing(const std::string& text) {
  std::ifstream maps("/proc/self/maps");
  int count = 0;
  for (std::string line; std::getline(maps, line);) {
    count += line.find(text) != std::string::npos ? 1 : 0;
  }
  return count;
}

/// Publishes one message of publisher `id` and expects `sub` to take it
/// next: the topic serves as if nothing had happened.
void expect_served(Publisher<TestMessage>& pub, Subscriber<TestMessage>& sub, std::uint32_t id) {
  TestMessage m;
  test::fill(m, id, 1);
  ASSERT_EQ(pub.publish(m)->delivered, 1U);
  auto s = sub.take();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->publisher, id);
}

class CrashRecovery : public test::PeerDomainTest {
 protected:
  std::shared_ptr<Node> make_node(const std::string& name) const {
    NodeOptions options;
    options.liveness_period_ms = 10;
    return PeerDomainTest::make_node(name, options);
  }
  void TearDown() override { EXPECT_TRUE(test::domain_files(domain).empty()); }
};

TEST_F(CrashRecovery, ASubscriberKilledWhileHoldingSamplesGivesEveryChunkBack) {
  auto node = make_node("publisher");
  const std::uint32_t free_at_start = test::total_free(*node);
  auto pub = node->advertise<TestMessage>("objects");
  auto survivor = node->subscribe<TestMessage>("objects", {.depth = 64});
  auto victim = peer("hold", {"count=10"});
  ASSERT_TRUE(victim.wait_for_line("READY", 10s));
  ASSERT_TRUE(eventually([&] { return pub->subscriber_count() == 2; }, 10s));
  for (std::uint64_t seq = 1; seq <= 20; ++seq) {
    TestMessage m;
    test::fill(m, 1, seq);
    ASSERT_TRUE(pub->publish(m).ok());
    auto s = survivor->take();  // the survivor drops its samples at once
    ASSERT_TRUE(s.ok());
  }
  ASSERT_TRUE(victim.wait_for_line("HOLDING 10", 10s)) << victim.output();
  // The victim holds 10 samples and has 10 more queued.
  EXPECT_EQ(test::total_free(*node), free_at_start - 20);

  victim.kill(SIGKILL);
  ASSERT_EQ(victim.wait(10s), 128 + SIGKILL);

  // The survivors notice, and the publisher reclaims on its next publish.
  std::uint64_t seq = 21;
  ASSERT_TRUE(eventually(
      [&] {
        TestMessage m;
        test::fill(m, 1, seq++);
        EXPECT_TRUE(pub->publish(m).ok());
        auto s = survivor->take();
        EXPECT_TRUE(s.ok());
        return pub->subscriber_count() == 1;
      },
      10s));
  EXPECT_EQ(test::total_free(*node), free_at_start);
}

TEST_F(CrashRecovery, APublisherKilledWhileHoldingALoanLeavesTheOthersWorking) {
  auto node = make_node("subscriber");
  auto sub = node->subscribe<TestMessage>("objects", {.depth = 64});
  auto victim = peer("loan", {"publish=5", "id=1"});
  ASSERT_TRUE(victim.wait_for_line("LOANED", 10s)) << victim.output();
  auto healthy_pub = node->advertise<TestMessage>("objects");

  // Messages published before the crash still arrive.
  std::vector<Sample<TestMessage>> from_victim;
  ASSERT_TRUE(eventually(
      [&] {
        if (auto s = sub->take()) {
          EXPECT_TRUE(test::intact(**s));
          from_victim.push_back(std::move(*s));
        }
        return from_victim.size() == 5;
      },
      10s));
  EXPECT_EQ(sub->publisher_count(), 2U);
  const std::string pool_name = "axon_pool_d" + std::to_string(domain) + "_peer-loan";
  EXPECT_EQ(mappings_containing(pool_name), 1);

  victim.kill(SIGKILL);
  ASSERT_EQ(victim.wait(10s), 128 + SIGKILL);
  for (const auto& s : from_victim) {
    EXPECT_TRUE(test::intact(*s)) << "samples stay readable after their publisher died";
  }
  from_victim.clear();

  ASSERT_TRUE(eventually([&] { return sub->publisher_count() == 1; }, 10s));
  // The subscriber let go of the dead publisher's pool: the kernel frees it.
  ASSERT_TRUE(eventually(
      [&] {
        (void)sub->take();
        return mappings_containing(pool_name) == 0;
      },
      10s));
  expect_served(**healthy_pub, **sub, 2);
}

TEST_F(CrashRecovery, APublisherKilledMidPublishCorruptsNothing) {
  auto node = make_node("subscriber");
  auto sub = node->subscribe<TestMessage>("objects", {.depth = 256});
  auto victim = peer("spam", {"id=1"});
  ASSERT_TRUE(victim.wait_for_line("PUBLISHING", 10s)) << victim.output();
  std::uint64_t received = 0;
  std::uint64_t last = 0;
  auto drain = [&] {
    while (auto s = sub->take()) {
      EXPECT_TRUE(test::intact(**s));
      EXPECT_GT(s->sequence, last);
      last = s->sequence;
      ++received;
    }
  };
  const auto until = std::chrono::steady_clock::now() + 200ms;
  while (std::chrono::steady_clock::now() < until) {
    drain();
  }
  victim.kill(SIGKILL);
  ASSERT_EQ(victim.wait(10s), 128 + SIGKILL);
  drain();
  EXPECT_GT(received, 0U);
  ASSERT_TRUE(eventually(
      [&] {
        drain();
        return sub->publisher_count() == 0;
      },
      10s));
  // A new publisher is served as if nothing happened.
  auto pub = node->advertise<TestMessage>("objects");
  ASSERT_TRUE(pub);
  expect_served(**pub, **sub, 9);
}

TEST_F(CrashRecovery, TheNextParticipantRemovesFilesLeftByDeadParticipants) {
  {
    auto first = peer("node", {});
    ASSERT_TRUE(first.wait_for_line("READY", 10s));
    auto second = peer("node", {});
    ASSERT_TRUE(second.wait_for_line("READY", 10s));
    // Both stopped before either dies: else the second, watching the first's
    // pidfd, may reclaim the first's files in the moment between the kills.
    ASSERT_TRUE(first.stop(10s));
    ASSERT_TRUE(second.stop(10s));
    first.kill(SIGKILL);
    second.kill(SIGKILL);
    ASSERT_EQ(first.wait(10s), 128 + SIGKILL);
    ASSERT_EQ(second.wait(10s), 128 + SIGKILL);
  }
  const auto left = test::domain_files(domain);
  ASSERT_EQ(left.size(), 6U) << "registry, lock, two sockets and two statistics segments stay after SIGKILL";
  {
    auto node = make_node("next");
    // A fresh domain: the newcomer's own socket and statistics, no second ones.
    const auto files = test::domain_files(domain);
    EXPECT_EQ(files.size(), 4U);
    for (const auto& f : files) {
      EXPECT_EQ(f.find("_p1_"), std::string::npos) << "a dead participant's file was left: " << f;
    }
  }
  // TearDown checks that nothing is left once the newcomer leaves.
}

TEST_F(CrashRecovery, SurvivorsForgetAParticipantKilledWithoutEndpoints) {
  auto node = make_node("survivor");
  auto sub = node->subscribe<TestMessage>("objects");
  auto victim = peer("publish", {"count=1", "wait_subs=1", "linger_ms=60000"});
  ASSERT_TRUE(victim.wait_for_line("PUBLISHED", 10s)) << victim.output();
  ASSERT_TRUE(eventually([&] { return sub->publisher_count() == 1; }, 10s));
  victim.kill(SIGKILL);
  ASSERT_EQ(victim.wait(10s), 128 + SIGKILL);
  ASSERT_TRUE(eventually([&] { return sub->publisher_count() == 0; }, 10s));
}

}  // namespace
}  // namespace axon
