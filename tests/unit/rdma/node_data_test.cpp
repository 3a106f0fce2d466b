// Topics between two real processes over RDMA (`transport: rdma`): this
// process, node 'na' on host a (10.0.2.15), publishes; a peer process (this
// binary exec'd again as RdmaNodeDataPeer.Subscribes), node 'nb' on host b
// (10.0.2.16), subscribes. Each host has its own shared-memory directory, as
// two machines would. Every message is written by the publishing node's card
// into a chunk of the subscribing node's pool, and read there in place.
// Guest only (ctest rdma.softroce_devices; softroce_stage.sh adds 10.0.2.16).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/common/temp_dir.hpp"
#include "tests/unit/rdma/node_blocks.hpp"

namespace axon {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kWait{15000};
constexpr std::uint32_t kDomain = 44;

using test::Block;
using test::env;
using test::eventually;
using test::fill;
using test::intact;

constexpr std::size_t kLarge = std::size_t{16} * 1024 * 1024;  // the default pool's largest class

std::string deployment() {
  return "hosts:\n  - {name: a, address: 10.0.2.15, rdma_device: " + env("AXON_RDMA_EXPECT_DEVICE") +
         "}\n  - {name: b, address: 10.0.2.16, rdma_device: " + env("AXON_RDMA_EXPECT_DEVICE") +
         "}\nnodes:\n  - {name: na, host: a}\n  - {name: nb, host: b}\n"
         "topics:\n  - {name: rdma/blocks, transport: rdma}\n"  // rdma/frames: not listed, so auto
         "udp:\n  discovery: {static_peers: [a, b], port: 27420}\n";
}

NodeOptions options_for(const std::string& config, const std::string& shm_dir) {
  NodeOptions options;
  options.domain_id = kDomain;
  options.shm_dir = shm_dir;
  options.config_path = config;
  return options;
}

// The peer process: node 'nb' subscribes AXON_RDMA_DATA_TOPIC (RELIABLE),
// prints READY, takes AXON_RDMA_DATA_COUNT messages (sleeping 1 ms after
// each of the first AXON_RDMA_DATA_SLOW: a slow subscriber), checks each,
// and prints "GOT <n> BAD <n> ORDER <n> RDMA <n>", then lives until killed.
TEST(RdmaNodeDataPeer, Subscribes) {
  const std::string config = env("AXON_RDMA_DATA_CONFIG");
  if (config.empty()) {
    GTEST_SKIP() << "the peer process of RdmaNodeDataOnDevice (it runs it as a child process)";
  }
  auto node = Node::create("nb", options_for(config, env("AXON_RDMA_DATA_SHM")));
  ASSERT_TRUE(node.ok()) << node.error().message();
  const std::string topic = env("AXON_RDMA_DATA_TOPIC");
  const std::uint64_t count = std::strtoull(env("AXON_RDMA_DATA_COUNT").c_str(), nullptr, 10);
  const std::uint64_t slow = std::strtoull(env("AXON_RDMA_DATA_SLOW").c_str(), nullptr, 10);
  const SubscriberQos qos{.depth = 16, .reliability = Reliability::kReliable, .block_timeout_ns = 2'000'000'000};
  std::uint64_t got = 0;
  std::uint64_t bad = 0;
  std::uint64_t order = 0;
  std::uint64_t last = 0;
  const auto deadline = Clock::now() + milliseconds(120000);
  if (topic == "rdma/blocks") {
    auto sub = (*node)->subscribe<Block>(topic, qos);
    ASSERT_TRUE(sub.ok()) << sub.error().message();
    std::printf("READY\n");
    std::fflush(stdout);
    while (got < count && Clock::now() < deadline) {
      auto sample = (*sub)->take();
      if (!sample) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        continue;
      }
      ++got;
      bad += intact(**sample) ? 0 : 1;
      order += (*sample)->sequence == last + 1 ? 0 : 1;
      last = (*sample)->sequence;
      if (got <= slow) {
        std::this_thread::sleep_for(milliseconds(1));
      }
    }
  } else {
    auto sub = (*node)->subscribe<Slice<std::uint8_t>>(topic, qos);
    ASSERT_TRUE(sub.ok()) << sub.error().message();
    std::printf("READY\n");
    std::fflush(stdout);
    while (got < count && Clock::now() < deadline) {
      auto sample = (*sub)->take();
      if (!sample) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        continue;
      }
      ++got;
      const Sample<Slice<std::uint8_t>>& frame = *sample;
      const std::uint64_t sequence = frame.info().sequence;
      const std::span<const std::uint8_t> bytes = *frame;
      bool ok = bytes.size() == kLarge - sequence;  // each a different length
      for (std::size_t i = 0; ok && i < bytes.size(); i += 4093) {
        ok = bytes[i] == static_cast<std::uint8_t>(sequence + i);
      }
      ok = ok && !bytes.empty() && bytes.back() == static_cast<std::uint8_t>(sequence + bytes.size() - 1);
      bad += ok ? 0 : 1;
      order += sequence == last + 1 ? 0 : 1;
      last = sequence;
    }
  }
  std::printf("GOT %llu BAD %llu ORDER %llu RDMA %llu\n", static_cast<unsigned long long>(got),
              static_cast<unsigned long long>(bad), static_cast<unsigned long long>(order),
              static_cast<unsigned long long>((*node)->network_counters().rdma_messages_received));
  std::fflush(stdout);
  std::this_thread::sleep_for(milliseconds(60000));
}

class RdmaNodeDataOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (env("AXON_RDMA_EXPECT_DEVICE").empty()) {
      GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
    }
    config = dir.write("deployment.yaml", deployment());
    host_a = dir.path() + "/a";
    host_b = dir.path() + "/b";
    ASSERT_EQ(::mkdir(host_a.c_str(), 0700), 0);
    ASSERT_EQ(::mkdir(host_b.c_str(), 0700), 0);
  }

  test::ChildProcess spawn_subscriber(const std::string& topic, std::uint64_t count, std::uint64_t slow) {
    const std::string shm = host_b;
    const std::string file = config;
    return test::ChildProcess::spawn({"/proc/self/exe", "--gtest_filter=RdmaNodeDataPeer.Subscribes"},
                                     [=]() -> std::string {
                                       // NOLINTBEGIN(concurrency-mt-unsafe): in the forked child, before exec
                                       if (setenv("AXON_RDMA_DATA_CONFIG", file.c_str(), 1) != 0 ||
                                           setenv("AXON_RDMA_DATA_SHM", shm.c_str(), 1) != 0 ||
                                           setenv("AXON_RDMA_DATA_TOPIC", topic.c_str(), 1) != 0 ||
                                           setenv("AXON_RDMA_DATA_COUNT", std::to_string(count).c_str(), 1) != 0 ||
                                           setenv("AXON_RDMA_DATA_SLOW", std::to_string(slow).c_str(), 1) != 0) {
                                         return "setenv failed";
                                       }
                                       // NOLINTEND(concurrency-mt-unsafe)
                                       return "";
                                     });
  }

  /// Waits until `node` sends `topic` to host b by RDMA: discovery matched
  /// the subscriber and the stream is open, then the receiver's answer and
  /// first grants (one round trip) have time to come back.
  static bool wait_for_stream(const Node& node, const std::string& topic) {
    const bool matched = eventually(kWait, [&] {
      const auto routes = node.routes(topic);
      const bool remote = std::any_of(routes.begin(), routes.end(), [](const TopicRoute& r) {
        return r.host == "b" && r.transport == TransportKind::kRdma && r.subscribers > 0;
      });
      return remote && node.network_counters().rdma_streams_sent >= 1;
    });
    std::this_thread::sleep_for(milliseconds(300));
    if (!matched) {
      const NetworkCounters c = node.network_counters();
      std::printf(
          "no RDMA stream of %s: links up %llu, streams sent %llu, hosts discovered %llu; routes:", topic.c_str(),
          static_cast<unsigned long long>(c.rdma_links_up), static_cast<unsigned long long>(c.rdma_streams_sent),
          static_cast<unsigned long long>(c.hosts_discovered));
      for (const TopicRoute& r : node.routes(topic)) {
        std::printf(" [%s %s %u]", r.host.c_str(), std::string(to_string(r.transport)).c_str(), r.subscribers);
      }
      std::printf("\n");
    }
    return matched;
  }

  test::TempDir dir{"axon-rdma-data"};
  std::string config;
  std::string host_a;
  std::string host_b;
};

TEST_F(RdmaNodeDataOnDevice, ReliableBlocksArriveIntactAndInOrderThroughASlowSubscriber) {
  auto node = Node::create("na", options_for(config, host_a));
  ASSERT_TRUE(node.ok()) << node.error().message();
  EXPECT_EQ((*node)->transport_for("rdma/blocks"), TransportKind::kRdma);
  auto pub = (*node)->advertise<Block>("rdma/blocks");
  ASSERT_TRUE(pub.ok()) << pub.error().message();
  constexpr std::uint64_t kCount = 2000;
  auto peer = spawn_subscriber("rdma/blocks", kCount, 200);
  ASSERT_TRUE(peer.wait_for_line("READY", kWait)) << peer.output();
  ASSERT_TRUE(wait_for_stream(**node, "rdma/blocks")) << "peer: " << peer.output();

  const auto started = Clock::now();
  std::uint64_t dropped = 0;
  for (std::uint64_t seq = 1; seq <= kCount; ++seq) {
    auto loan = (*pub)->loan();
    ASSERT_TRUE(loan.ok()) << "sequence " << seq;
    fill(**loan, seq);
    const PublishResult published = (*pub)->publish(std::move(*loan));
    ASSERT_TRUE(published.ok()) << "sequence " << seq;
    dropped += published.status().dropped;
  }
  const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - started).count();

  ASSERT_TRUE(peer.wait_for_line("GOT", milliseconds(60000))) << peer.output();
  const std::string expected = "GOT " + std::to_string(kCount) + " BAD 0 ORDER 0 RDMA " + std::to_string(kCount);
  EXPECT_NE(peer.output().find(expected), std::string::npos) << peer.output();
  EXPECT_EQ(dropped, 0U) << "a RELIABLE subscriber lost messages for want of credit";
  const NetworkCounters c = (*node)->network_counters();
  EXPECT_EQ(c.rdma_messages_sent, kCount);
  EXPECT_EQ(c.rdma_bytes_sent, kCount * sizeof(Block));
  EXPECT_EQ(c.rdma_credit_drops + c.rdma_credit_timeouts + c.rdma_send_failures, 0U);
  EXPECT_EQ(c.messages_sent, 0U) << "nothing of the topic went by UDP";
  std::printf("rdma node data: %llu x %zu B reliable in %lld ms through a subscriber slow for the first 200\n",
              static_cast<unsigned long long>(kCount), sizeof(Block), static_cast<long long>(took));
  peer.kill(SIGKILL);
  EXPECT_EQ(peer.wait(kWait), 128 + SIGKILL);
}

TEST_F(RdmaNodeDataOnDevice, SixteenMebibyteMessagesOfAnAutoTopicArriveWholeInOneWriteEach) {
  auto node = Node::create("na", options_for(config, host_a));
  ASSERT_TRUE(node.ok()) << node.error().message();
  EXPECT_EQ((*node)->transport_for("rdma/frames"), TransportKind::kRdma) << "auto, and both hosts have a device";
  auto pub = (*node)->advertise<Slice<std::uint8_t>>("rdma/frames", PublisherQos{.max_payload_bytes = kLarge});
  ASSERT_TRUE(pub.ok()) << pub.error().message();
  constexpr std::uint64_t kCount = 12;
  auto peer = spawn_subscriber("rdma/frames", kCount, 0);
  ASSERT_TRUE(peer.wait_for_line("READY", kWait)) << peer.output();
  ASSERT_TRUE(wait_for_stream(**node, "rdma/frames")) << "peer: " << peer.output();

  std::uint64_t dropped = 0;
  for (std::uint64_t seq = 1; seq <= kCount; ++seq) {
    const std::size_t length = kLarge - seq;
    LoanResult<Loan<Slice<std::uint8_t>>> loan = (*pub)->loan(length);
    for (int tries = 0; !loan.ok() && loan.exhausted() && tries < 2000; ++tries) {
      std::this_thread::sleep_for(milliseconds(1));  // both 16 MiB chunks still pinned by their writes
      loan = (*pub)->loan(length);
    }
    ASSERT_TRUE(loan.ok()) << "sequence " << seq;
    std::span<std::uint8_t> bytes = **loan;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = static_cast<std::uint8_t>(seq + i);
    }
    const PublishResult published = (*pub)->publish(std::move(*loan));
    ASSERT_TRUE(published.ok()) << "sequence " << seq;
    dropped += published.status().dropped;
  }
  ASSERT_TRUE(peer.wait_for_line("GOT", milliseconds(60000))) << peer.output();
  const std::string expected = "GOT " + std::to_string(kCount) + " BAD 0 ORDER 0 RDMA " + std::to_string(kCount);
  EXPECT_NE(peer.output().find(expected), std::string::npos) << peer.output();
  EXPECT_EQ(dropped, 0U);
  const NetworkCounters c = (*node)->network_counters();
  EXPECT_EQ(c.rdma_messages_sent, kCount);
  peer.kill(SIGKILL);
  EXPECT_EQ(peer.wait(kWait), 128 + SIGKILL);
}

TEST_F(RdmaNodeDataOnDevice, AKilledSubscriberIsLostTheSendersChunksComeBackAndARestartedOneReceivesAgain) {
  auto node = Node::create("na", options_for(config, host_a));
  ASSERT_TRUE(node.ok()) << node.error().message();
  auto free_chunks = [&] {
    std::uint64_t free = 0;
    for (const PoolClassStats& s : (*node)->pool_stats()) {
      free += s.free_chunks;
    }
    return free;
  };
  const std::uint64_t free_at_start = free_chunks();
  auto advertised = (*node)->advertise<Block>("rdma/blocks");
  ASSERT_TRUE(advertised.ok()) << advertised.error().message();
  std::shared_ptr<Publisher<Block>> pub = *advertised;
  auto first = spawn_subscriber("rdma/blocks", 1'000'000, 0);
  ASSERT_TRUE(first.wait_for_line("READY", kWait)) << first.output();
  ASSERT_TRUE(wait_for_stream(**node, "rdma/blocks")) << "peer: " << first.output();
  for (std::uint64_t seq = 1; seq <= 100; ++seq) {
    Block b;
    fill(b, seq);
    ASSERT_TRUE(pub->publish(b).ok());
  }
  first.kill(SIGKILL);
  EXPECT_EQ(first.wait(kWait), 128 + SIGKILL);
  ASSERT_TRUE(eventually(kWait, [&] { return (*node)->network_counters().rdma_link_losses == 1; }));
  // Publishing on while the peer is gone: nothing to write to, nothing held.
  for (std::uint64_t seq = 101; seq <= 200; ++seq) {
    Block b;
    fill(b, seq);
    ASSERT_TRUE(pub->publish(b).ok());
  }
  pub.reset();  // its reuse cache goes back to the pool; a chunk still pinned by a write would not
  EXPECT_EQ(free_chunks(), free_at_start) << "chunks still held after the link to the killed peer was lost";

  auto again = (*node)->advertise<Block>("rdma/blocks");
  ASSERT_TRUE(again.ok()) << again.error().message();
  auto second = spawn_subscriber("rdma/blocks", 50, 0);
  ASSERT_TRUE(second.wait_for_line("READY", kWait)) << second.output();
  ASSERT_TRUE(eventually(kWait, [&] { return (*node)->network_counters().rdma_links_up == 1; }));
  ASSERT_TRUE(wait_for_stream(**node, "rdma/blocks")) << "peer: " << second.output();
  ASSERT_TRUE(eventually(kWait, [&] { return (*node)->network_counters().rdma_streams_sent >= 2; }));
  for (std::uint64_t seq = 1; seq <= 50; ++seq) {
    Block b;
    fill(b, seq);
    ASSERT_TRUE((*again)->publish(b).ok());
  }
  ASSERT_TRUE(second.wait_for_line("GOT", milliseconds(30000))) << second.output();
  EXPECT_NE(second.output().find("GOT 50 BAD 0 ORDER 0"), std::string::npos) << second.output();
  second.kill(SIGKILL);
  EXPECT_EQ(second.wait(kWait), 128 + SIGKILL);
}

}  // namespace
}  // namespace axon
