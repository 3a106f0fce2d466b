// One `auto` topic from one publisher to two hosts by two transports, real
// processes in the guest: node 'na' on host a (10.0.2.15, rxe0) publishes;
// node 'nb' on host b (10.0.2.16, rxe0) gets it by RDMA, node 'nc' on host c
// (10.0.2.17, no rdma_device) by UDP; each peer is this binary exec'd again
// as RdmaMixedPeer.Subscribes, each host with its own shared-memory directory.
// Guest only (ctest rdma.softroce_devices; softroce_stage.sh adds the addresses).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/common/temp_dir.hpp"
#include "tests/unit/rdma/two_hosts.hpp"

namespace axon {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using rdma_test::Block;
using rdma_test::env;
using rdma_test::eventually;
using rdma_test::free_chunks;
using rdma_test::publish_blocks;

constexpr milliseconds kWait{15000};
constexpr std::uint32_t kDomain = 45;
constexpr const char* kTopic = "mixed/blocks";
constexpr std::uint64_t kFromC = 1'000'000;  ///< The first sequence of a publisher on c is kFromC + 1.

std::string deployment() {
  const std::string device = env("AXON_RDMA_EXPECT_DEVICE");
  return "hosts:\n  - {name: a, address: 10.0.2.15, rdma_device: " + device +
         "}\n  - {name: b, address: 10.0.2.16, rdma_device: " + device +
         "}\n  - {name: c, address: 10.0.2.17}\n"
         "nodes:\n  - {name: na, host: a}\n  - {name: nb, host: b}\n  - {name: nc, host: c}\n"
         "topics:\n  - {name: mixed/blocks, transport: auto}\n"
         "udp:\n  discovery: {static_peers: [a, b, c], port: 27421}\n";
}

NodeOptions options_for(const std::string& config, const std::string& shm_dir) {
  NodeOptions options;
  options.domain_id = kDomain;
  options.shm_dir = shm_dir;
  options.config_path = config;
  return options;
}

// The peer process: node AXON_MIXED_NODE subscribes the topic (RELIABLE),
// prints READY, takes AXON_MIXED_COUNT messages (sleeping 1 ms after each
// of the first AXON_MIXED_SLOW), checks each (in order per publisher: c's
// sequences start at kFromC), and prints
// "GOT <n> BAD <n> ORDER <n> RDMA <n> UDP <n>" (messages its node received
// by each transport), then lives until killed.
TEST(RdmaMixedPeer, Subscribes) {
  const std::string config = env("AXON_MIXED_CONFIG");
  if (config.empty()) {
    GTEST_SKIP() << "the peer process of RdmaMixedOnDevice (it runs it as a child process)";
  }
  auto node = Node::create(env("AXON_MIXED_NODE"), options_for(config, env("AXON_MIXED_SHM")));
  ASSERT_TRUE(node.ok()) << node.error().message();
  const std::uint64_t count = std::strtoull(env("AXON_MIXED_COUNT").c_str(), nullptr, 10);
  const std::uint64_t slow = std::strtoull(env("AXON_MIXED_SLOW").c_str(), nullptr, 10);
  auto sub = (*node)->subscribe<Block>(
      kTopic, SubscriberQos{.depth = 16, .reliability = Reliability::kReliable, .block_timeout_ns = 2'000'000'000});
  ASSERT_TRUE(sub.ok()) << sub.error().message();
  std::printf("READY\n");
  std::fflush(stdout);
  std::uint64_t got = 0;
  std::uint64_t bad = 0;
  std::uint64_t order = 0;
  std::array<std::uint64_t, 2> last{0, kFromC};  // per publisher: a's, c's
  const auto deadline = Clock::now() + milliseconds(120000);
  while (got < count && Clock::now() < deadline) {
    auto sample = (*sub)->take();
    if (!sample) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      continue;
    }
    ++got;
    bad += rdma_test::intact(**sample) ? 0 : 1;
    std::uint64_t& previous = last[(*sample)->sequence > kFromC ? 1 : 0];
    order += (*sample)->sequence == previous + 1 ? 0 : 1;
    previous = (*sample)->sequence;
    if (got <= slow) {
      std::this_thread::sleep_for(milliseconds(1));
    }
  }
  const NetworkCounters c = (*node)->network_counters();
  std::printf("GOT %llu BAD %llu ORDER %llu RDMA %llu UDP %llu\n", static_cast<unsigned long long>(got),
              static_cast<unsigned long long>(bad), static_cast<unsigned long long>(order),
              static_cast<unsigned long long>(c.rdma_messages_received),
              static_cast<unsigned long long>(c.messages_received));
  std::fflush(stdout);
  std::this_thread::sleep_for(milliseconds(60000));
}

// The peer process that publishes: node AXON_MIXED_NODE (on c) waits until
// host b subscribes, publishes AXON_MIXED_COUNT blocks from kFromC + 1, one a
// millisecond (b's reader takes a's too: a UDP reader whose ACKs come after
// 100 ms loses messages by design, udp_writer.hpp), prints
// "SENT <n> DROPPED <n> TO B <transport>", then lives until killed.
TEST(RdmaMixedPeer, Publishes) {
  const std::string config = env("AXON_MIXED_CONFIG");
  if (config.empty()) {
    GTEST_SKIP() << "the peer process of RdmaMixedOnDevice (it runs it as a child process)";
  }
  auto node = Node::create(env("AXON_MIXED_NODE"), options_for(config, env("AXON_MIXED_SHM")));
  ASSERT_TRUE(node.ok()) << node.error().message();
  const std::uint64_t count = std::strtoull(env("AXON_MIXED_COUNT").c_str(), nullptr, 10);
  auto pub = (*node)->advertise<Block>(kTopic);
  ASSERT_TRUE(pub.ok()) << pub.error().message();
  std::printf("READY\n");
  std::fflush(stdout);
  std::string to_b;
  ASSERT_TRUE(eventually(kWait, [&] {
    for (const TopicRoute& r : (*node)->routes(kTopic)) {
      if (r.host == "b" && r.subscribers > 0) {
        to_b = std::string(to_string(r.transport));
        return true;
      }
    }
    return false;
  }));
  std::this_thread::sleep_for(milliseconds(300));
  std::uint64_t dropped = 0;
  for (std::uint64_t seq = kFromC + 1; seq <= kFromC + count; ++seq) {
    Block b;
    rdma_test::fill(b, seq);
    const PublishResult published = (*pub)->publish(b);
    ASSERT_TRUE(published.ok());
    dropped += published.status().dropped;
    std::this_thread::sleep_for(milliseconds(1));
  }
  std::printf("SENT %llu DROPPED %llu TO B %s\n", static_cast<unsigned long long>(count),
              static_cast<unsigned long long>(dropped), to_b.c_str());
  std::fflush(stdout);
  std::this_thread::sleep_for(milliseconds(60000));
}

class RdmaMixedOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (env("AXON_RDMA_EXPECT_DEVICE").empty()) {
      GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
    }
    config = dir.write("deployment.yaml", deployment());
    for (const char* host : {"a", "b", "c"}) {
      ASSERT_EQ(::mkdir((dir.path() + "/" + host).c_str(), 0700), 0);
    }
  }

  [[nodiscard]] std::string shm_of(const std::string& host) const { return dir.path() + "/" + host; }

  /// A peer process: `role` Subscribes or Publishes (RdmaMixedPeer).
  test::ChildProcess spawn_subscriber(const std::string& node, const std::string& host, std::uint64_t count,
                                      std::uint64_t slow, const char* role = "Subscribes") {
    const std::string shm = shm_of(host);
    const std::string file = config;
    return test::ChildProcess::spawn(
        {"/proc/self/exe", std::string("--gtest_filter=RdmaMixedPeer.") + role}, [=]() -> std::string {
          // NOLINTBEGIN(concurrency-mt-unsafe): in the forked child, before exec
          if (setenv("AXON_MIXED_CONFIG", file.c_str(), 1) != 0 || setenv("AXON_MIXED_SHM", shm.c_str(), 1) != 0 ||
              setenv("AXON_MIXED_NODE", node.c_str(), 1) != 0 ||
              setenv("AXON_MIXED_COUNT", std::to_string(count).c_str(), 1) != 0 ||
              setenv("AXON_MIXED_SLOW", std::to_string(slow).c_str(), 1) != 0) {
            return "setenv failed";
          }
          // NOLINTEND(concurrency-mt-unsafe)
          return "";
        });
  }

  /// Waits until `node` routes the topic to b by RDMA (its stream open, the
  /// receiver's answer and first grants given a round trip) and to c by UDP.
  static bool wait_for_both(const Node& node) {
    const auto has = [](const std::vector<TopicRoute>& routes, const char* host, TransportKind kind) {
      return std::any_of(routes.begin(), routes.end(), [&](const TopicRoute& r) {
        return r.host == host && r.transport == kind && r.subscribers > 0;
      });
    };
    const bool matched = eventually(kWait, [&] {
      const auto routes = node.routes(kTopic);
      return has(routes, "b", TransportKind::kRdma) && has(routes, "c", TransportKind::kUdp) &&
             node.network_counters().rdma_streams_sent >= 1;
    });
    std::this_thread::sleep_for(milliseconds(300));
    if (!matched) {
      std::printf("routes of %s:", kTopic);
      for (const TopicRoute& r : node.routes(kTopic)) {
        std::printf(" [%s %s %u]", r.host.c_str(), std::string(to_string(r.transport)).c_str(), r.subscribers);
      }
      std::printf(" (rdma streams sent %llu)\n",
                  static_cast<unsigned long long>(node.network_counters().rdma_streams_sent));
    }
    return matched;
  }

  /// The publishing node's counters, for a failure's message.
  static std::string counters_of(const Node& node) {
    const NetworkCounters c = node.network_counters();
    return "na: rdma written " + std::to_string(c.rdma_messages_sent) + ", credit drops " +
           std::to_string(c.rdma_credit_drops) + ", credit timeouts " + std::to_string(c.rdma_credit_timeouts) +
           ", send failures " + std::to_string(c.rdma_send_failures) + ", link losses " +
           std::to_string(c.rdma_link_losses) + ", udp messages sent " + std::to_string(c.messages_sent) +
           ", hosts lost " + std::to_string(c.hosts_lost);
  }

  test::TempDir dir{"axon-rdma-mixed"};
  std::string config;
};

// b slow for the first 200 (its credits run out and are refilled): every
// message reaches both, each by its own transport, and every chunk the two
// writers pinned comes back once the subscribers and the publisher go. (A UDP
// reader slow enough that no ACK comes for 100 ms loses messages by design,
// udp_writer.hpp: the next test has one that stops.)
TEST_F(RdmaMixedOnDevice, OnePublishReachesBByRdmaAndCByUdpIntactInOrderAndFreesEveryChunk) {
  auto node = Node::create("na", options_for(config, shm_of("a")));
  ASSERT_TRUE(node.ok()) << node.error().message();
  EXPECT_EQ((*node)->transport_for(kTopic), TransportKind::kUdp) << "not every other host is reached by RDMA";
  const std::uint64_t free_at_start = free_chunks(**node);
  auto advertised = (*node)->advertise<Block>(kTopic);
  ASSERT_TRUE(advertised.ok()) << advertised.error().message();
  std::shared_ptr<Publisher<Block>> pub = *advertised;
  constexpr std::uint64_t kCount = 2000;
  auto on_b = spawn_subscriber("nb", "b", kCount, 200);
  auto on_c = spawn_subscriber("nc", "c", kCount, 0);
  ASSERT_TRUE(on_b.wait_for_line("READY", kWait)) << on_b.output();
  ASSERT_TRUE(on_c.wait_for_line("READY", kWait)) << on_c.output();
  ASSERT_TRUE(wait_for_both(**node)) << "b: " << on_b.output() << "\nc: " << on_c.output();

  const auto started = Clock::now();
  const std::uint64_t dropped = publish_blocks(*pub, 1, kCount);
  const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - started).count();

  const std::string seen = counters_of(**node) + ", publish statuses dropped " + std::to_string(dropped) +
                           "; published in " + std::to_string(took) + " ms";
  ASSERT_TRUE(on_b.wait_for_line("GOT", milliseconds(60000))) << on_b.output() << "\n" << seen;
  ASSERT_TRUE(on_c.wait_for_line("GOT", milliseconds(60000))) << on_c.output() << "\n" << seen;
  const std::string all = "GOT " + std::to_string(kCount) + " BAD 0 ORDER 0 ";
  EXPECT_NE(on_b.output().find(all + "RDMA " + std::to_string(kCount) + " UDP 0"), std::string::npos)
      << "b: " << on_b.output();
  EXPECT_NE(on_c.output().find(all + "RDMA 0 UDP " + std::to_string(kCount)), std::string::npos)
      << "c: " << on_c.output();
  EXPECT_EQ(dropped, 0U) << "a RELIABLE subscriber lost messages";
  const NetworkCounters c = (*node)->network_counters();
  EXPECT_EQ(c.rdma_messages_sent, kCount) << "one write per message, to b only";
  EXPECT_EQ(c.messages_sent, kCount) << "one UDP message per message, to c only";
  EXPECT_EQ(c.rdma_credit_drops + c.rdma_credit_timeouts + c.rdma_send_failures, 0U);
  std::printf("rdma mixed: %llu x %zu B reliable to b by RDMA and c by UDP in %lld ms\n",
              static_cast<unsigned long long>(kCount), sizeof(Block), static_cast<long long>(took));
  const auto routes = (*node)->routes(kTopic);
  for (const TopicRoute& r : routes) {
    if (r.host == "b") {
      EXPECT_EQ(r.transport, TransportKind::kRdma);
    } else if (r.host == "c") {
      EXPECT_EQ(r.transport, TransportKind::kUdp);
    }
  }

  on_b.kill(SIGKILL);
  on_c.kill(SIGKILL);
  EXPECT_EQ(on_b.wait(kWait), 128 + SIGKILL);
  EXPECT_EQ(on_c.wait(kWait), 128 + SIGKILL);
  pub.reset();  // the UDP writer's history unpins what it holds; the RDMA writes completed or were lost with the link
  EXPECT_TRUE(eventually(kWait, [&] { return free_chunks(**node) == free_at_start; }))
      << "chunks still pinned: " << free_at_start - free_chunks(**node);
}

// c's subscriber stops reading after 50 messages while a publishes on (its
// queue and socket fill, the RELIABLE window with what c did not acknowledge):
// b still gets every message by RDMA, and no pin of the UDP history leaks.
TEST_F(RdmaMixedOnDevice, AStalledUdpSubscriberHoldsNoPinOnceThePublisherGoes) {
  auto node = Node::create("na", options_for(config, shm_of("a")));
  ASSERT_TRUE(node.ok()) << node.error().message();
  const std::uint64_t free_at_start = free_chunks(**node);
  auto advertised = (*node)->advertise<Block>(kTopic);
  ASSERT_TRUE(advertised.ok()) << advertised.error().message();
  std::shared_ptr<Publisher<Block>> pub = *advertised;
  constexpr std::uint64_t kCount = 150;
  auto on_b = spawn_subscriber("nb", "b", kCount, 0);
  auto on_c = spawn_subscriber("nc", "c", 50, 0);  // takes 50, then sleeps holding nothing
  ASSERT_TRUE(on_b.wait_for_line("READY", kWait)) << on_b.output();
  ASSERT_TRUE(on_c.wait_for_line("READY", kWait)) << on_c.output();
  ASSERT_TRUE(wait_for_both(**node)) << "b: " << on_b.output() << "\nc: " << on_c.output();

  (void)publish_blocks(*pub, 1, kCount);

  ASSERT_TRUE(on_b.wait_for_line("GOT", milliseconds(60000))) << on_b.output() << "\n" << counters_of(**node);
  EXPECT_NE(on_b.output().find("GOT " + std::to_string(kCount) + " BAD 0 ORDER 0 RDMA " + std::to_string(kCount)),
            std::string::npos)
      << "b: " << on_b.output();
  ASSERT_TRUE(on_c.wait_for_line("GOT", milliseconds(60000))) << on_c.output();
  EXPECT_NE(on_c.output().find("GOT 50 BAD 0 ORDER 0 RDMA 0"), std::string::npos) << "c: " << on_c.output();

  pub.reset();  // with c still alive and silent: the history is given up with its writer
  EXPECT_TRUE(eventually(kWait, [&] { return free_chunks(**node) == free_at_start; }))
      << "chunks still pinned: " << free_at_start - free_chunks(**node);
  on_b.kill(SIGKILL);
  on_c.kill(SIGKILL);
  EXPECT_EQ(on_b.wait(kWait), 128 + SIGKILL);
  EXPECT_EQ(on_c.wait(kWait), 128 + SIGKILL);
}

// The receive side: host b's one receiver of the topic gets it from a by RDMA
// and from a publisher on c (no device) by UDP, both to the same subscriber,
// each publisher's messages intact and in order.
TEST_F(RdmaMixedOnDevice, BReceivesTheTopicFromAByRdmaAndFromCByUdp) {
  auto node = Node::create("na", options_for(config, shm_of("a")));
  ASSERT_TRUE(node.ok()) << node.error().message();
  auto pub = (*node)->advertise<Block>(kTopic);
  ASSERT_TRUE(pub.ok()) << pub.error().message();
  constexpr std::uint64_t kCount = 300;
  auto on_b = spawn_subscriber("nb", "b", 2 * kCount, 0);
  auto on_c = spawn_subscriber("nc", "c", kCount, 0, "Publishes");
  ASSERT_TRUE(on_b.wait_for_line("READY", kWait)) << on_b.output();
  ASSERT_TRUE(on_c.wait_for_line("READY", kWait)) << on_c.output();
  ASSERT_TRUE(eventually(kWait, [&] {
    const auto routes = (*node)->routes(kTopic);
    return std::any_of(routes.begin(), routes.end(),
                       [](const TopicRoute& r) {
                         return r.host == "b" && r.transport == TransportKind::kRdma && r.subscribers > 0;
                       }) &&
           (*node)->network_counters().rdma_streams_sent >= 1;
  }));
  std::this_thread::sleep_for(milliseconds(300));

  const std::uint64_t dropped = publish_blocks(**pub, 1, kCount);

  ASSERT_TRUE(on_c.wait_for_line("SENT", milliseconds(60000))) << on_c.output();
  EXPECT_NE(on_c.output().find("SENT " + std::to_string(kCount) + " DROPPED 0 TO B udp"), std::string::npos)
      << "c: " << on_c.output();
  ASSERT_TRUE(on_b.wait_for_line("GOT", milliseconds(60000))) << on_b.output() << "\n" << counters_of(**node);
  EXPECT_NE(on_b.output().find("GOT " + std::to_string(2 * kCount) + " BAD 0 ORDER 0 RDMA " + std::to_string(kCount) +
                               " UDP " + std::to_string(kCount)),
            std::string::npos)
      << "b: " << on_b.output();
  EXPECT_EQ(dropped, 0U);
  on_b.kill(SIGKILL);
  on_c.kill(SIGKILL);
  EXPECT_EQ(on_b.wait(kWait), 128 + SIGKILL);
  EXPECT_EQ(on_c.wait(kWait), 128 + SIGKILL);
}

}  // namespace
}  // namespace axon
