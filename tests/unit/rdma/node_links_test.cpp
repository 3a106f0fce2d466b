// The node's RDMA participant (transports/rdma/rdma_participant.hpp, wired in
// src/node_transport.cpp) between two real processes: this one, node 'na' on
// host a (10.0.2.15), and a peer process (this binary exec'd again as
// RdmaNodeLinksPeer.RunsUntilKilled), node 'nb' on host b (10.0.2.16), both
// hosts on the Soft-RoCE guest's rxe0, discovery by UDP static peers. Their
// links show in Node::network_counters(). Guest only (ctest
// rdma.softroce_devices; softroce_stage.sh adds 10.0.2.16).
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/common/temp_dir.hpp"

namespace axon {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kWait{15000};

std::string env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread starts
  return value == nullptr ? std::string() : std::string(value);
}

/// Both hosts name the device unless `b_has_device` is false.
std::string deployment(const std::string& device, bool b_has_device) {
  return "hosts:\n  - {name: a, address: 10.0.2.15, rdma_device: " + device + "}\n  - {name: b, address: 10.0.2.16" +
         (b_has_device ? ", rdma_device: " + device : std::string()) +
         "}\nnodes:\n  - {name: na, host: a}\n  - {name: nb, host: b}\n"
         "udp:\n  discovery: {static_peers: [a, b], port: 27410}\n";
}

NodeOptions options_for(const std::string& config, const std::string& shm_dir) {
  NodeOptions options;
  options.domain_id = 43;
  options.shm_dir = shm_dir;
  options.config_path = config;
  return options;
}

/// Waits until `node`'s counters satisfy `done`; false after `timeout`.
template <class Done>
bool wait_counters(const Node& node, milliseconds timeout, Done done) {
  const auto until = Clock::now() + timeout;
  while (!done(node.network_counters())) {
    if (Clock::now() >= until) {
      return false;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

// The peer process: node 'nb' of AXON_RDMA_NODE_PEER_CONFIG; prints "UP" once its link is up, "NOLINK" when
// AXON_RDMA_NODE_PEER_EXPECT_NONE is set and none came within 2 s, then lives until killed (at most 60 s).
TEST(RdmaNodeLinksPeer, RunsUntilKilled) {
  const std::string config = env("AXON_RDMA_NODE_PEER_CONFIG");
  if (config.empty()) {
    GTEST_SKIP() << "the peer process of RdmaNodeLinksOnDevice (it runs it as a child process)";
  }
  auto node = Node::create("nb", options_for(config, env("AXON_RDMA_NODE_PEER_SHM")));
  ASSERT_TRUE(node.ok()) << node.error().message();
  const bool up = wait_counters(**node, kWait, [](const NetworkCounters& c) { return c.rdma_links_up == 1; });
  std::printf("%s\n", up ? "UP" : "NOT UP");
  std::fflush(stdout);
  std::this_thread::sleep_for(milliseconds(60000));
}

class RdmaNodeLinksOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (env("AXON_RDMA_EXPECT_DEVICE").empty()) {
      GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
    }
  }

  test::ChildProcess spawn_peer(const std::string& config) {
    const std::string shm = dir.path();
    return test::ChildProcess::spawn({"/proc/self/exe", "--gtest_filter=RdmaNodeLinksPeer.RunsUntilKilled"},
                                     [=]() -> std::string {
                                       // NOLINTNEXTLINE(concurrency-mt-unsafe): in the forked child, before exec
                                       if (setenv("AXON_RDMA_NODE_PEER_CONFIG", config.c_str(), 1) != 0 ||
                                           setenv("AXON_RDMA_NODE_PEER_SHM", shm.c_str(), 1) != 0) {  // NOLINT
                                         return "setenv failed";
                                       }
                                       return "";
                                     });
  }

  test::TempDir dir{"axon-rdma-links"};
};

TEST_F(RdmaNodeLinksOnDevice, TwoNodesOfTwoHostsLinkAndAKilledPeerIsLostAndItsRestartLinksAgain) {
  const std::string config = dir.write("deployment.yaml", deployment(env("AXON_RDMA_EXPECT_DEVICE"), true));
  auto node = Node::create("na", options_for(config, dir.path()));
  ASSERT_TRUE(node.ok()) << node.error().message();
  const Node& sut = **node;

  auto first = spawn_peer(config);
  const auto spawned = Clock::now();
  ASSERT_TRUE(wait_counters(sut, kWait, [](const NetworkCounters& c) { return c.rdma_links_up == 1; }))
      << "links_up " << sut.network_counters().rdma_links_up << "; peer: " << first.output();
  std::printf("node links: up %lld ms after the peer process started\n",
              static_cast<long long>(std::chrono::duration_cast<milliseconds>(Clock::now() - spawned).count()));
  ASSERT_TRUE(first.wait_for_line("UP", kWait)) << first.output();
  EXPECT_EQ(sut.network_counters().rdma_link_losses, 0U);

  const auto killed = Clock::now();
  first.kill(SIGKILL);
  ASSERT_TRUE(wait_counters(sut, milliseconds(5000),
                            [](const NetworkCounters& c) { return c.rdma_link_losses == 1 && c.rdma_links_up == 0; }))
      << "losses " << sut.network_counters().rdma_link_losses;
  std::printf("node links: the SIGKILLed peer's link was lost %lld ms after the kill\n",
              static_cast<long long>(std::chrono::duration_cast<milliseconds>(Clock::now() - killed).count()));
  EXPECT_EQ(first.wait(kWait), 128 + SIGKILL);

  auto second = spawn_peer(config);
  const auto restarted = Clock::now();
  ASSERT_TRUE(wait_counters(sut, kWait, [](const NetworkCounters& c) { return c.rdma_links_up == 1; }))
      << "peer: " << second.output();
  std::printf("node links: up again %lld ms after the new peer process started\n",
              static_cast<long long>(std::chrono::duration_cast<milliseconds>(Clock::now() - restarted).count()));
  ASSERT_TRUE(second.wait_for_line("UP", kWait)) << second.output();
  EXPECT_EQ(sut.network_counters().rdma_link_losses, 1U);
  second.kill(SIGKILL);
  EXPECT_EQ(second.wait(kWait), 128 + SIGKILL);
}

TEST_F(RdmaNodeLinksOnDevice, APeerHostWithoutADeviceGetsNoLink) {
  const std::string config = dir.write("deployment.yaml", deployment(env("AXON_RDMA_EXPECT_DEVICE"), false));
  auto node = Node::create("na", options_for(config, dir.path()));
  ASSERT_TRUE(node.ok()) << node.error().message();
  auto peer = spawn_peer(config);
  // The peer waits kWait for a link: discovery is long done when it gives up.
  ASSERT_TRUE(peer.wait_for_line("NOT UP", kWait + milliseconds(10000))) << peer.output();
  const NetworkCounters c = (*node)->network_counters();
  EXPECT_EQ(c.rdma_links_up, 0U);
  EXPECT_EQ(c.rdma_link_losses, 0U);
  EXPECT_GE(c.hosts_discovered, 1U) << "discovery did find the peer's host";
  peer.kill(SIGKILL);
  EXPECT_EQ(peer.wait(kWait), 128 + SIGKILL);
}

}  // namespace
}  // namespace axon
