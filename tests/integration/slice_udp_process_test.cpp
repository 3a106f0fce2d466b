// Slices and bytes over the UDP transport between two real processes: two
// "hosts" on loopback (127.0.0.1 and 127.0.0.2, static peers, a shared-memory
// directory each; no root needed). This process subscribes on host beta,
// axon_slice_peer publishes on host alpha; run-time sizes from 0 elements
// to messages of many datagrams arrive whole and in order.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/slice_patterns.hpp"
#include "tests/support/slice_receive.hpp"
#include "tests/support/two_host_loopback.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
using test::join;
using test::SlicePoint;

class SliceOverUdp : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(node); }
  ChildProcess sender(const std::string& command, std::vector<std::string> args) {
    std::vector<std::string> argv{AXON_SLICE_PEER, command,
                                  "topic=frames",  "config=" + hosts.config().string(),
                                  "node=sender",   "shm_dir=" + hosts.shm_dir("a")};
    argv.insert(argv.end(), args.begin(), args.end());
    return ChildProcess::spawn(argv);
  }
  /// Takes one message per entry of `sizes` (20 s at most), checks each.
  template <class T>
  void expect_sizes(Subscriber<T>& sub, const std::vector<std::size_t>& sizes, ChildProcess& pub) {
    EXPECT_EQ(test::receive_sizes(sub, sizes, 20s), sizes.size()) << pub.output();
    EXPECT_EQ(sub.counters().rejected, 0U);
  }

  // Liveliness 3 s: on a loaded CI machine a 20 ms heartbeat can be late by
  // far more than half a second, and a host declared lost misses messages.
  test::TwoHostLoopback hosts{
      "axon_slice_udp",
      {.topics = "  - {name: frames, reliability: reliable, depth: 64}\n", .liveliness_timeout_ms = 3000}};
  std::shared_ptr<Node> node = hosts.node("receiver", "b");
};

TEST_F(SliceOverUdp, FloatSlicesFromEmptyToManyDatagramsArriveWholeAndInOrder) {
  const std::vector<std::size_t> sizes{0, 1, 1000, 0, 300'000, 16'384};
  auto sub = node->subscribe<Slice<float>>("frames");
  ASSERT_TRUE(sub.ok()) << sub.error().message();
  auto pub = sender("publish", {"elem=f32", "sizes=" + join(sizes)});
  expect_sizes(**sub, sizes, pub);
  (*sub).reset();
  EXPECT_EQ(pub.wait(30s), 0) << pub.output();
}

TEST_F(SliceOverUdp, StructSlicesArriveWholeAndInOrder) {
  const std::vector<std::size_t> sizes{0, 5, 70'000};
  auto sub = node->subscribe<Slice<SlicePoint>>("frames");
  ASSERT_TRUE(sub.ok()) << sub.error().message();
  auto pub = sender("publish", {"elem=point", "sizes=" + join(sizes)});
  expect_sizes(**sub, sizes, pub);
  (*sub).reset();
  EXPECT_EQ(pub.wait(30s), 0) << pub.output();
}

TEST_F(SliceOverUdp, BytesOfAnUntypedTopicMakeTheRoundTrip) {
  const std::vector<std::size_t> sizes{0, 7, 100'000};
  auto sub = node->subscribe<Bytes>("frames");
  ASSERT_TRUE(sub.ok()) << sub.error().message();
  auto pub = sender("bytes", {"sizes=" + join(sizes)});
  // The peer fills an untyped message as bytes: check it as Slice<uint8_t> would.
  const std::size_t received = test::receive_bytes(**sub, sizes, 20s);
  EXPECT_EQ(received, sizes.size()) << pub.output();
  (*sub).reset();
  EXPECT_EQ(pub.wait(30s), 0) << pub.output();
}

TEST_F(SliceOverUdp, BytesThatCarryASliceReachItsTypedSubscriberOnTheOtherHost) {
  auto sub = node->subscribe<Slice<float>>("frames");
  ASSERT_TRUE(sub.ok()) << sub.error().message();
  auto pub = sender("bytes", {"carries=f32", "sizes=0,40,400000"});
  expect_sizes(**sub, {0, 10, 100'000}, pub);
  (*sub).reset();
  EXPECT_EQ(pub.wait(30s), 0) << pub.output();
}

TEST_F(SliceOverUdp, ASliceOfAnotherElementTypeOnTheOtherHostGetsNothingAndIsCounted) {
  // Across hosts the type check is the UDP announcements' (no shared
  // registry): the publisher sees the mismatch, counts it and sends nothing.
  node.reset();  // this process is the sender on alpha this time
  node = hosts.node("sender", "a");
  ASSERT_TRUE(node);
  std::vector<std::string> argv{AXON_SLICE_PEER, "subscribe",
                                "elem=f64",      "linger=1",
                                "topic=frames",  "config=" + hosts.config().string(),
                                "node=receiver", "shm_dir=" + hosts.shm_dir("b")};
  auto receiver = ChildProcess::spawn(argv);
  ASSERT_TRUE(receiver.wait_for_line("SUBSCRIBED", 20s)) << receiver.output();
  auto pub = node->advertise<Slice<float>>("frames");
  ASSERT_TRUE(pub.ok());
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (node->network_counters().type_mismatches == 0 && std::chrono::steady_clock::now() < deadline) {
    auto loan = (*pub)->loan(4);
    ASSERT_TRUE(loan.ok());
    ASSERT_TRUE((*pub)->publish(std::move(*loan)).ok());
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_GE(node->network_counters().type_mismatches, 1U);
  EXPECT_EQ(node->network_counters().messages_sent, 0U) << "nothing goes to a subscriber of another type";
}

}  // namespace
}  // namespace axon
