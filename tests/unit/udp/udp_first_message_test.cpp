// A RELIABLE subscriber that the publishing node routes to (Node::routes())
// gets the very next message: the route is reported only once the writer
// sends there. Two "hosts" of one process on loopback, as udp_loopback_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/test_messages.hpp"
#include "tests/support/two_host_loopback.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::routed_to;
using test::TestMessage;

/// 1 MiB: its network publish holds the writer's mutex for a while.
struct LongMessage {
  static constexpr std::string_view kAxonTypeName = "axon_test::LongMessage";
  std::uint64_t sequence = 0;
  std::uint8_t body[(1U << 20U) - sizeof(std::uint64_t)];
};

class UdpFirstMessage : public ::testing::Test {
 protected:
  std::shared_ptr<Node> node(const std::string& name, const std::string& shm) const { return hosts.node(name, shm); }

  test::TwoHostLoopback hosts{"axon_udp_first", {.topics = "  - {name: long, reliability: reliable, depth: 4}\n"}};
};

// The sender's participant updates its writers' destinations one after the
// other when a subscription is announced; a long message being sent by an
// earlier writer delays the update of the later ones. A route reported
// meanwhile was a promise the writer did not keep: the first message after it
// stayed on the sending host, and the stream started with the second.
TEST_F(UdpFirstMessage, AReliableSubscriberGetsTheFirstMessagePublishedAfterItIsRouted) {
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  auto long_subscriber = receiver->subscribe<LongMessage>("long");
  auto long_publisher = sender->advertise<LongMessage>("long");  // the first writer: updated first
  ASSERT_TRUE(long_subscriber && long_publisher);
  ASSERT_TRUE(eventually([&] { return routed_to(*sender, "long", "beta"); }, 5s));
  std::atomic<bool> stop{false};
  std::vector<std::jthread> threads;
  const struct Stop {
    std::atomic<bool>& stop;
    ~Stop() { stop.store(true, std::memory_order_relaxed); }
  } stopper{stop};            // declared after the threads: runs before they are joined, also when an ASSERT returns
  threads.emplace_back([&] {  // keeps the first writer's mutex held most of the time
    while (!stop.load(std::memory_order_relaxed)) {
      if (auto loan = (*long_publisher)->loan()) {
        (void)(*long_publisher)->publish(std::move(*loan));
      } else {
        std::this_thread::sleep_for(100us);
      }
    }
  });
  threads.emplace_back([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      while ((*long_subscriber)->take()) {
      }
      std::this_thread::sleep_for(200us);
    }
  });
  constexpr int kRounds = 12;
  int late_starts = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::string topic = "first_" + std::to_string(round);
    auto publisher = sender->advertise<TestMessage>(topic);
    auto subscriber =
        receiver->subscribe<TestMessage>(topic, SubscriberQos{.depth = 64, .reliability = Reliability::kReliable});
    ASSERT_TRUE(publisher && subscriber);
    ASSERT_TRUE(eventually([&] { return routed_to(*sender, topic, "beta"); }, 5s));
    for (std::uint64_t i = 1; i <= 3; ++i) {
      TestMessage message;
      test::fill(message, 1, i);
      ASSERT_TRUE((*publisher)->publish(message));
    }
    std::vector<std::uint64_t> got;
    ASSERT_TRUE(eventually(
        [&] {
          while (auto sample = (*subscriber)->take()) {
            got.push_back((*sample)->sequence);
          }
          return !got.empty() && got.back() == 3;
        },
        5s))
        << "round " << round << ": received " << got.size() << " messages";
    late_starts += got.front() == 1 ? 0 : 1;
    EXPECT_EQ(got.front(), 1U) << "round " << round << ": the stream started at message " << got.front();
  }
  EXPECT_EQ(late_starts, 0);
}

}  // namespace
}  // namespace axon
