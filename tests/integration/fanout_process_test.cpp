// Many subscribers on one topic (issue 15): a publisher serves more than 61
// subscribers through the wide holder ledger. 100 subscribers in 20 real
// processes get every message; a subscriber killed on a wide bit gives every
// chunk back; a transient-local late joiner on a wide bit gets the history.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/peer_domain_test.hpp"
#include "tests/support/test_messages.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
using test::eventually;
using test::TestMessage;

class FanOut : public test::PeerDomainTest {
 protected:
  void TearDown() override { EXPECT_TRUE(test::domain_files(domain).empty()) << "files left in /dev/shm"; }

  /// A node with a small pool (every chunk counted by the tests).
  std::shared_ptr<Node> small_node(const std::string& name) const {
    NodeOptions options;
    options.liveness_period_ms = 10;
    options.chunk_classes = {{.payload_bytes = 256, .count = 256}};
    return make_node(name, options);
  }
  /// axon_fanout_peer with `subs` subscribers expecting `expect` messages.
  ChildProcess fanout_peer(std::uint32_t subs, std::uint64_t expect) const {
    return ChildProcess::spawn({AXON_FANOUT_PEER, "domain=" + std::to_string(domain), "topic=fanout",
                                "subs=" + std::to_string(subs), "expect=" + std::to_string(expect)});
  }
  /// Publishes message `seq` and lets `local` take (and drop) what came.
  static void publish_and_drain(Publisher<TestMessage>& pub, std::uint64_t seq,
                                std::vector<std::shared_ptr<Subscriber<TestMessage>>>& local) {
    TestMessage m;
    test::fill(m, 1, seq);
    auto status = pub.publish(m);
    EXPECT_TRUE(status.ok()) << status.error().message();
    for (auto& sub : local) {
      while (sub->take().ok()) {
      }
    }
  }
};

TEST_F(FanOut, HundredSubscribersInTwentyProcessesReceiveEveryMessage) {
  constexpr std::uint32_t kProcesses = 20;
  constexpr std::uint32_t kPerProcess = 5;
  constexpr std::uint64_t kMessages = 200;
  auto node = small_node("camera");
  auto pub = node->advertise<TestMessage>("fanout");
  ASSERT_TRUE(pub.ok()) << pub.error().message();
  std::vector<ChildProcess> peers;
  for (std::uint32_t p = 0; p < kProcesses; ++p) {
    peers.push_back(fanout_peer(kPerProcess, kMessages));
  }
  for (auto& peer : peers) {
    ASSERT_TRUE(peer.wait_for_line("READY", 20s)) << peer.output();
  }
  ASSERT_TRUE(eventually([&] { return (*pub)->subscriber_count() == kProcesses * kPerProcess; }, 10s))
      << (*pub)->subscriber_count() << " subscribers connected";

  const auto started = std::chrono::steady_clock::now();
  for (std::uint64_t seq = 1; seq <= kMessages; ++seq) {
    TestMessage m;
    test::fill(m, 1, seq);
    auto status = (*pub)->publish(m);
    ASSERT_TRUE(status.ok()) << status.error().message();
    EXPECT_EQ(status->delivered, kProcesses * kPerProcess) << "message " << seq;
    EXPECT_EQ(status->timed_out, 0U) << "message " << seq;
  }

  for (auto& peer : peers) {
    const auto result = peer.wait_for_line("RESULT", 20s);
    ASSERT_TRUE(result) << peer.output();
    EXPECT_EQ(*result, "RESULT complete=5 errors=0") << peer.output();
    EXPECT_EQ(peer.wait(10s), 0);
  }
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_LT(took, 10s) << "every subscriber got every message, but slowly";
  EXPECT_EQ((*pub)->counters().totals.queued, kMessages * kProcesses * kPerProcess);
}

TEST_F(FanOut, ASubscriberKilledOnAWideBitGivesEveryChunkBack) {
  auto node = small_node("publisher");
  const std::uint32_t free_at_start = test::total_free(*node);
  auto pub = node->advertise<TestMessage>("objects");
  ASSERT_TRUE(pub.ok());
  // 64 subscribers take bits 0..63: the victim's connection gets bit 64, the
  // fourth of the first wide word.
  std::vector<std::shared_ptr<Subscriber<TestMessage>>> local;
  for (int i = 0; i < 64; ++i) {
    auto sub = node->subscribe<TestMessage>("objects", {.depth = 4});
    ASSERT_TRUE(sub.ok()) << sub.error().message();
    local.push_back(std::move(*sub));
  }
  auto victim = peer("hold", {"count=10"});
  ASSERT_TRUE(victim.wait_for_line("READY", 10s));
  ASSERT_TRUE(eventually([&] { return (*pub)->subscriber_count() == 65; }, 10s));
  for (std::uint64_t seq = 1; seq <= 20; ++seq) {
    publish_and_drain(**pub, seq, local);
  }
  ASSERT_TRUE(victim.wait_for_line("HOLDING 10", 10s)) << victim.output();
  EXPECT_EQ(test::total_free(*node), free_at_start - 20) << "the victim holds 10 samples and has 10 queued";

  victim.kill(SIGKILL);
  ASSERT_EQ(victim.wait(10s), 128 + SIGKILL);

  std::uint64_t seq = 21;
  ASSERT_TRUE(eventually(
      [&] {
        publish_and_drain(**pub, seq++, local);
        return (*pub)->subscriber_count() == 64;
      },
      10s));
  EXPECT_EQ(test::total_free(*node), free_at_start) << "every chunk of the dead wide subscriber is back";
}

TEST_F(FanOut, ATransientLocalLateJoinerOnAWideBitGetsTheHistory) {
  auto node = small_node("map");
  const std::uint32_t free_at_start = test::total_free(*node);
  PublisherQos qos;
  qos.durability = Durability::kTransientLocal;
  qos.durability_depth = 4;
  auto advertised = node->advertise<TestMessage>("map", qos);
  ASSERT_TRUE(advertised.ok()) << advertised.error().message();
  std::shared_ptr<Publisher<TestMessage>> pub = std::move(*advertised);
  std::vector<std::shared_ptr<Subscriber<TestMessage>>> early;
  for (int i = 0; i < 70; ++i) {  // bits 0..69: narrow and wide ones hold the history's chunks
    auto sub = node->subscribe<TestMessage>("map", {.depth = 8});
    ASSERT_TRUE(sub.ok()) << sub.error().message();
    early.push_back(std::move(*sub));
  }
  for (std::uint64_t seq = 1; seq <= 6; ++seq) {
    publish_and_drain(*pub, seq, early);
  }

  auto subscribed = node->subscribe<TestMessage>("map", {.depth = 8});  // bit 70
  ASSERT_TRUE(subscribed.ok()) << subscribed.error().message();
  std::shared_ptr<Subscriber<TestMessage>> late = std::move(*subscribed);

  std::vector<std::uint64_t> got;
  ASSERT_TRUE(eventually(
      [&] {
        while (auto s = late->take()) {
          EXPECT_TRUE(test::intact(**s));
          got.push_back(s->sequence);
        }
        return got.size() >= 4;
      },
      10s));
  EXPECT_EQ(got, (std::vector<std::uint64_t>{3, 4, 5, 6})) << "the last 4 messages, oldest first";
  EXPECT_EQ(test::total_free(*node), free_at_start - 4) << "only the history holds chunks";
  late.reset();
  early.clear();
  pub.reset();
  EXPECT_EQ(test::total_free(*node), free_at_start);
}

}  // namespace
}  // namespace axon
