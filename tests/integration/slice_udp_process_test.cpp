// Slices and bytes over the UDP transport between two real processes: two
// "hosts" on loopback (127.0.0.1 and 127.0.0.2, static peers, a shared-memory
// directory each; no root needed). This process subscribes on host beta,
// axon_slice_peer publishes on host alpha; run-time sizes from 0 elements
// to messages of many datagrams arrive whole and in order.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/slice_patterns.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
using test::SlicePoint;

std::string join(const std::vector<std::size_t>& sizes) {
  std::string out;
  for (const std::size_t n : sizes) {
    out += (out.empty() ? "" : ",") + std::to_string(n);
  }
  return out;
}

class SliceOverUdp : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto unique = static_cast<unsigned>(::getpid()) * 13U + static_cast<unsigned>(counter++) * 7919U;
    const auto port = static_cast<std::uint16_t>(20000 + unique % 20000);
    dir = std::filesystem::temp_directory_path() / ("axon_slice_udp_" + std::to_string(unique));
    std::filesystem::create_directories(dir / "a");
    std::filesystem::create_directories(dir / "b");
    config = dir / "deploy.yaml";
    // Liveliness 3 s: on a loaded CI machine a 20 ms heartbeat can be late by
    // far more than half a second, and a host declared lost misses messages.
    std::ofstream(config) << "domain: " << 100000 + unique % 100000 << R"(
hosts:
  - {name: alpha, address: 127.0.0.1}
  - {name: beta, address: 127.0.0.2}
nodes:
  - {name: sender, host: alpha}
  - {name: receiver, host: beta}
topics:
  - {name: frames, reliability: reliable, depth: 64}
udp:
  discovery:
    static_peers: [alpha, beta]
    port: )" << port << R"(
  heartbeat_period_ms: 20
  liveliness_timeout_ms: 3000
  receive_buffer_bytes: 16 MiB
)";
    NodeOptions options;
    options.config_path = config.string();
    options.shm_dir = (dir / "b").string();
    auto created = Node::create("receiver", options);
    ASSERT_TRUE(created) << created.error().message();
    node = *created;
  }
  void TearDown() override {
    node.reset();
    std::filesystem::remove_all(dir);
  }
  ChildProcess sender(const std::string& command, std::vector<std::string> args) {
    std::vector<std::string> argv{AXON_SLICE_PEER, command,
                                  "topic=frames",  "config=" + config.string(),
                                  "node=sender",   "shm_dir=" + (dir / "a").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return ChildProcess::spawn(argv);
  }
  /// Takes one message per entry of `sizes` (20 s at most), checks each.
  template <class T, class Element = typename Serializer<T>::Element>
  void expect_sizes(Subscriber<T>& sub, const std::vector<std::size_t>& sizes, ChildProcess& pub) {
    std::size_t received = 0;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (received < sizes.size() && std::chrono::steady_clock::now() < deadline) {
      auto sample = sub.take();
      if (!sample) {
        std::this_thread::sleep_for(200us);
        continue;
      }
      const std::uint64_t sequence = ++received;
      EXPECT_EQ(sample.value().info().sequence, sequence);
      const auto elements = std::span(reinterpret_cast<const Element*>(sample->data()), sample->size());
      EXPECT_EQ(elements.size(), sizes[sequence - 1]) << "message " << sequence;
      EXPECT_EQ(test::first_wrong_element(elements, sequence), elements.size()) << "message " << sequence;
    }
    EXPECT_EQ(received, sizes.size()) << pub.output();
    EXPECT_EQ(sub.counters().rejected, 0U);
  }

  static inline int counter = 0;
  std::filesystem::path dir;
  std::filesystem::path config;
  std::shared_ptr<Node> node;
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
  std::size_t received = 0;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (received < sizes.size() && std::chrono::steady_clock::now() < deadline) {
    if (auto sample = (*sub)->take()) {
      ++received;
      const auto bytes = std::span(reinterpret_cast<const std::uint8_t*>(sample->data()), sample->size());
      EXPECT_EQ(bytes.size(), sizes[received - 1]);
      EXPECT_EQ(test::first_wrong_element(bytes, received), bytes.size());
    } else {
      std::this_thread::sleep_for(200us);
    }
  }
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
  NodeOptions options;
  options.config_path = config.string();
  options.shm_dir = (dir / "a").string();
  auto created = Node::create("sender", options);
  ASSERT_TRUE(created) << created.error().message();
  node = *created;
  std::vector<std::string> argv{AXON_SLICE_PEER, "subscribe",
                                "elem=f64",      "linger=1",
                                "topic=frames",  "config=" + config.string(),
                                "node=receiver", "shm_dir=" + (dir / "b").string()};
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
