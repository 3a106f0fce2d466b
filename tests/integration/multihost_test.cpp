// axon across hosts (issue 6): axon_net_peer processes on virtual hosts
// (network namespaces on one bridge, each with its own /dev/shm), talking
// through the UDP transport as the deployment config says. Needs root;
// skipped otherwise (tests/support/virtual_hosts_test.hpp).
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/child_process.hpp"
#include "tests/support/common/temp_dir.hpp"
#include "tests/support/deployment_yaml.hpp"
#include "tests/support/garbage_datagrams.hpp"
#include "tests/support/host_process.hpp"
#include "tests/support/peer_summary.hpp"
#include "tests/support/udp_socket.hpp"
#include "tests/support/virtual_hosts_test.hpp"

namespace axon::test {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kStartTimeout{15'000};
constexpr milliseconds kExitTimeout{15'000};

class MultihostTest : public VirtualHostsTest {
 protected:
  void SetUp() override {
    VirtualHostsTest::SetUp();
    if (IsSkipped()) {
      return;
    }
    auto hosts = VirtualHosts::create({.hosts = 3});
    ASSERT_TRUE(hosts) << hosts.error().message();
    virtual_hosts.emplace(std::move(*hosts));
  }

  /// A deployment of this test's hosts in a domain of its own.
  static Deployment deployment(Discovery discovery = Discovery::kMulticast) {
    Deployment d;
    d.domain = unique_domain();
    d.discovery = discovery;
    return d;
  }

  /// Writes `d` as NAME.yaml; returns its path.
  std::string write_config(const Deployment& d, const std::string& name = "deploy") {
    return config_dir.write(name + ".yaml", to_yaml(d, *virtual_hosts));
  }

  /// axon_net_peer on host `k` as `node` of `config`, with `role` and `args`.
  ChildProcess start_peer(std::size_t k, const std::string& config, const std::string& node, const std::string& role,
                          const std::vector<std::string>& args) {
    std::vector<std::string> argv{net_peer_path(), "--config", config, "--node", node, "--role", role};
    argv.insert(argv.end(), args.begin(), args.end());
    return spawn_on_host(*virtual_hosts, k, argv);
  }

  /// Starts a subscriber and waits until its endpoint exists.
  ChildProcess start_subscriber(std::size_t k, const std::string& config, const std::string& node,
                                const std::vector<std::string>& args) {
    ChildProcess sub = start_peer(k, config, node, "subscriber", args);
    EXPECT_TRUE(sub.wait_for_line("READY", kStartTimeout)) << node << ": " << sub.output();
    return sub;
  }

  /// The subscriber's SUMMARY line, once it is through (nullopt on timeout).
  static std::optional<PeerSummary> summary_of(ChildProcess& sub, milliseconds timeout) {
    const auto line = sub.wait_for_line("SUMMARY", timeout);
    if (!line) {
      return std::nullopt;
    }
    std::printf("  %s\n", line->c_str());  // the figures, for whoever reads the log
    return PeerSummary(*line);
  }

  /// SIGTERMs a lingering publisher and returns its PUBLISHER line.
  static std::optional<PeerSummary> stop_publisher(ChildProcess& pub) {
    pub.kill(SIGTERM);
    const auto line = pub.wait_for_line("PUBLISHER", kExitTimeout);
    pub.wait(kExitTimeout);
    if (!line) {
      return std::nullopt;
    }
    std::printf("  %s\n", line->c_str());
    return PeerSummary(*line);
  }

  std::optional<VirtualHosts> virtual_hosts;
  TempDir config_dir{"axon-multihost"};
};

/// Every message 1..count arrived once, in order, intact.
void expect_complete_and_in_order(const PeerSummary& s, std::uint64_t count) {
  EXPECT_EQ(s.number("received"), count) << s.line();
  EXPECT_EQ(s.number("first"), 1U) << s.line();
  EXPECT_EQ(s.number("last"), count) << s.line();
  EXPECT_EQ(s.number("missing"), 0U) << s.line();
  EXPECT_EQ(s.number("out_of_order"), 0U) << s.line();
  EXPECT_EQ(s.number("duplicates"), 0U) << s.line();
  EXPECT_EQ(s.number("corrupt"), 0U) << s.line();
}

std::vector<std::string> message_args(const std::string& topic, std::uint64_t bytes, std::uint64_t count) {
  return {"--topic", topic, "--bytes", std::to_string(bytes), "--count", std::to_string(count)};
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class MultihostDelivery : public MultihostTest, public ::testing::WithParamInterface<Discovery> {
 protected:
  /// Publisher on host 0, subscribers on hosts 1 and 2: every message of
  /// `bytes` reaches both, complete and in order.
  void deliver_to_two_hosts(std::uint64_t bytes, std::uint64_t count, double rate_hz) {
    Deployment d = deployment(GetParam());
    d.nodes = {{"pub", 0}, {"sub1", 1}, {"sub2", 2}};
    d.topics = {{.name = "net/data", .reliability = "reliable", .depth = 64, .history = "keep_all"}};
    const std::string config = write_config(d);
    const auto args = message_args("net/data", bytes, count) + std::vector<std::string>{"--timeout-ms", "60000"};
    ChildProcess sub1 = start_subscriber(1, config, "sub1", args);
    ChildProcess sub2 = start_subscriber(2, config, "sub2", args);
    ChildProcess pub = start_peer(0, config, "pub", "publisher",
                                  args + std::vector<std::string>{"--rate-hz", std::to_string(rate_hz),
                                                                  "--wait-subscribers", "2", "--linger-ms", "60000"});
    const auto subscribed = pub.wait_for_line("SUBSCRIBED", kStartTimeout);
    ASSERT_TRUE(subscribed) << "publisher: " << pub.output();
    EXPECT_EQ(PeerSummary(*subscribed).number("remote_subscribers"), 2U) << *subscribed;

    const auto s1 = summary_of(sub1, milliseconds(60'000));
    const auto s2 = summary_of(sub2, milliseconds(60'000));
    const auto p = stop_publisher(pub);

    ASSERT_TRUE(s1) << "sub1: " << sub1.output();
    ASSERT_TRUE(s2) << "sub2: " << sub2.output();
    expect_complete_and_in_order(*s1, count);
    expect_complete_and_in_order(*s2, count);
    EXPECT_EQ(sub1.wait(kExitTimeout), 0);
    EXPECT_EQ(sub2.wait(kExitTimeout), 0);
    ASSERT_TRUE(p) << "publisher: " << pub.output();
    EXPECT_EQ(p->number("failed"), 0U) << p->line();
    // Once per remote host, not per remote subscriber (one each here).
    EXPECT_GE(p->number("messages_sent"), count * 2) << p->line();
  }
};

TEST_P(MultihostDelivery, SmallMessagesReachTwoOtherHostsCompleteAndInOrder) { deliver_to_two_hosts(64, 300, 300); }

TEST_P(MultihostDelivery, FourMiBMessagesReachTwoOtherHostsCompleteAndInOrder) {
  deliver_to_two_hosts(4U << 20U, 20, 10);
}

INSTANTIATE_TEST_SUITE_P(Discovery, MultihostDelivery,
                         ::testing::Values(Discovery::kMulticast, Discovery::kStaticPeers),
                         [](const ::testing::TestParamInfo<Discovery>& info) {
                           return info.param == Discovery::kMulticast ? "Multicast" : "StaticPeers";
                         });

TEST_F(MultihostTest, AKilledHostIsReportedLostWithinTheLivelinessTimeout) {
  Deployment d = deployment();
  d.nodes = {{"pub", 0}, {"sub1", 1}, {"sub2", 2}};
  d.topics = {{.name = "net/alive"}};
  const std::string config = write_config(d);
  const auto args = message_args("net/alive", 64, 1'000'000) + std::vector<std::string>{"--timeout-ms", "60000"};
  ChildProcess sub1 = start_subscriber(1, config, "sub1", args + std::vector<std::string>{"--wait-lost"});
  ChildProcess sub2 = start_subscriber(2, config, "sub2", args + std::vector<std::string>{"--wait-lost"});
  ChildProcess pub = start_peer(0, config, "pub", "publisher", args + std::vector<std::string>{"--rate-hz", "100"});
  ASSERT_TRUE(sub1.wait_for_line("FIRST", milliseconds(20'000))) << "sub1: " << sub1.output();
  ASSERT_TRUE(sub2.wait_for_line("FIRST", milliseconds(20'000))) << "sub2: " << sub2.output();

  const auto killed_at = Clock::now();
  pub.kill(SIGKILL);  // the whole "host" goes: its only process dies without a word
  pub.wait(kExitTimeout);

  // Within the liveliness timeout, plus slack for a loaded 2-core machine.
  const milliseconds limit{d.liveliness_timeout_ms + 1500};
  for (ChildProcess* sub : {&sub1, &sub2}) {
    const auto lost = sub->wait_for_line("LOST", limit + milliseconds(5'000));
    ASSERT_TRUE(lost) << sub->output();
    const auto after = std::chrono::duration_cast<milliseconds>(Clock::now() - killed_at);
    std::printf("  %s (%lld ms after the kill; liveliness timeout %u ms)\n", lost->c_str(),
                static_cast<long long>(after.count()), d.liveliness_timeout_ms);
    EXPECT_GE(after, milliseconds(d.liveliness_timeout_ms / 2)) << "lost before it could have been noticed: spurious";
    EXPECT_LE(after, limit) << "liveliness handler fired " << after.count() << " ms after the kill";
    const auto s = summary_of(*sub, kExitTimeout);
    ASSERT_TRUE(s) << sub->output();
    EXPECT_GE(s->number("publishers_lost"), 1U) << s->line();
    EXPECT_EQ(s->number("corrupt"), 0U) << s->line();
    EXPECT_EQ(sub->wait(kExitTimeout), 0);
  }
}

TEST_F(MultihostTest, AHostCutOffTheNetworkIsReportedLostWhileItsProcessLives) {
  Deployment d = deployment(Discovery::kStaticPeers);
  d.nodes = {{"pub", 0}, {"sub", 1}};
  d.topics = {{.name = "net/cable"}};
  const std::string config = write_config(d);
  const auto args = message_args("net/cable", 64, 1'000'000) + std::vector<std::string>{"--timeout-ms", "60000"};
  ChildProcess sub = start_subscriber(1, config, "sub", args + std::vector<std::string>{"--wait-lost"});
  ChildProcess pub = start_peer(0, config, "pub", "publisher", args + std::vector<std::string>{"--rate-hz", "100"});
  ASSERT_TRUE(sub.wait_for_line("FIRST", milliseconds(20'000))) << "sub: " << sub.output();

  const auto cut_at = Clock::now();
  ASSERT_TRUE(virtual_hosts->set_link(0, false));  // only heartbeats can tell: no process exits

  const milliseconds limit{d.liveliness_timeout_ms + 1500};
  const auto lost = sub.wait_for_line("LOST", limit + milliseconds(5'000));
  ASSERT_TRUE(lost) << sub.output();
  const auto after = std::chrono::duration_cast<milliseconds>(Clock::now() - cut_at);
  std::printf("  %s (%lld ms after the cut; liveliness timeout %u ms)\n", lost->c_str(),
              static_cast<long long>(after.count()), d.liveliness_timeout_ms);
  EXPECT_GE(after, milliseconds(d.liveliness_timeout_ms / 2)) << "lost before it could have been noticed: spurious";
  EXPECT_LE(after, limit);
  const auto s = summary_of(sub, kExitTimeout);
  ASSERT_TRUE(s) << sub.output();
  EXPECT_GE(s->number("publishers_lost"), 1U) << s->line();
  EXPECT_GE(s->number("hosts_lost"), 1U) << s->line();
  EXPECT_EQ(pub.wait(milliseconds(0)), -1) << "the publisher was meant to live on: " << pub.output();
}

TEST_F(MultihostTest, ReliableTopicDeliversEveryMessageInOrderDespiteTenPercentLoss) {
  Deployment d = deployment();
  d.nodes = {{"pub", 0}, {"sub", 1}};
  d.topics = {{.name = "net/reliable", .reliability = "reliable", .depth = 64, .history = "keep_all"}};
  const std::string config = write_config(d);
  ASSERT_TRUE(virtual_hosts->add_packet_loss(1, 0.1));
  // 64 KiB: 47 fragments each, so nearly every message loses some and is NACKed.
  const std::uint64_t count = 150;
  const auto args = message_args("net/reliable", 65536, count) + std::vector<std::string>{"--timeout-ms", "90000"};
  ChildProcess sub = start_subscriber(1, config, "sub", args);
  ChildProcess pub =
      start_peer(0, config, "pub", "publisher",
                 args + std::vector<std::string>{"--rate-hz", "50", "--wait-subscribers", "1", "--linger-ms", "90000"});

  const auto s = summary_of(sub, milliseconds(90'000));
  const auto p = stop_publisher(pub);

  ASSERT_TRUE(s) << "subscriber: " << sub.output();
  expect_complete_and_in_order(*s, count);
  EXPECT_EQ(s->number("messages_lost"), 0U) << "the history should serve every NACK here: " << s->line();
  EXPECT_GT(s->number("nacks_sent"), 0U) << "10 % loss and no NACK? " << s->line();
  EXPECT_EQ(sub.wait(kExitTimeout), 0);
  ASSERT_TRUE(p) << "publisher: " << pub.output();
  EXPECT_GT(p->number("fragments_resent"), 0U) << p->line();
}

TEST_F(MultihostTest, BestEffortTopicDeliversOnlyCompleteMessagesDespiteTenPercentLoss) {
  Deployment d = deployment();
  d.nodes = {{"pub", 0}, {"sub", 1}};
  d.topics = {{.name = "net/best_effort", .depth = 64}};
  const std::string config = write_config(d);
  ASSERT_TRUE(virtual_hosts->add_packet_loss(1, 0.1));
  // 64 KiB: 47 fragments, which the sender hands to the kernel as two
  // segmented messages (UDP_SEGMENT, 44 + 3); netem on the veth drops such a
  // message whole, so about one message in five loses some fragments, not all.
  const std::uint64_t count = 300;
  const auto args = message_args("net/best_effort", 65536, count) +
                    std::vector<std::string>{"--timeout-ms", "60000", "--idle-ms", "2000"};
  ChildProcess sub = start_subscriber(1, config, "sub", args);
  ChildProcess pub = start_peer(
      0, config, "pub", "publisher",
      args + std::vector<std::string>{"--rate-hz", "200", "--wait-subscribers", "1", "--linger-ms", "60000"});

  const auto s = summary_of(sub, milliseconds(60'000));
  stop_publisher(pub);

  ASSERT_TRUE(s) << "subscriber: " << sub.output();
  EXPECT_EQ(s->number("corrupt"), 0U) << "an incomplete message reached the application: " << s->line();
  EXPECT_EQ(s->number("out_of_order"), 0U) << s->line();
  EXPECT_EQ(s->number("duplicates"), 0U) << s->line();
  EXPECT_LT(s->number("received"), count) << "no loss at all? " << s->line();
  EXPECT_GT(s->number("received"), count / 2) << s->line();
  EXPECT_GT(s->number("messages_incomplete"), 0U) << s->line();
}

TEST_F(MultihostTest, GarbageDatagramsAreCountedAndIgnoredWhileTrafficFlows) {
  Deployment d = deployment();
  d.nodes = {{"pub", 0}, {"sub", 1}};
  d.topics = {{.name = "net/hardened", .reliability = "reliable", .depth = 64, .history = "keep_all"}};
  const std::string config = write_config(d);
  const std::uint64_t count = 600;
  const auto args = message_args("net/hardened", 2048, count) + std::vector<std::string>{"--timeout-ms", "60000"};
  ChildProcess sub = start_subscriber(1, config, "sub", args);
  ChildProcess pub = start_peer(
      0, config, "pub", "publisher",
      args + std::vector<std::string>{"--rate-hz", "200", "--wait-subscribers", "1", "--linger-ms", "60000"});
  ASSERT_TRUE(sub.wait_for_line("FIRST", milliseconds(20'000))) << sub.output();

  // The subscriber's data socket is the one bound to host 1's own address
  // on a port of its own: look it up on host 1 itself.
  const std::string target = virtual_hosts->host(1).address;
  ChildProcess lookup = run_on_host(*virtual_hosts, 1, [&] {
    for (const std::uint16_t port : udp_ports_bound_to(target)) {
      if (port != d.discovery_port) {  // static discovery binds the host's address too
        std::printf("PORT %u\n", port);
      }
    }
    return 0;
  });
  const auto port_line = lookup.wait_for_line("PORT", kExitTimeout);
  ASSERT_TRUE(port_line) << "no socket bound to " << target << ": " << lookup.output();
  ASSERT_EQ(lookup.wait(kExitTimeout), 0) << lookup.output();
  const auto data_port = static_cast<std::uint16_t>(std::stoul(port_line->substr(5)));

  // From host 2, at the data port and at the discovery port.
  const auto garbage = garbage_datagrams(static_cast<std::uint32_t>(::getpid()));
  ChildProcess attacker = run_on_host(*virtual_hosts, 2, [&]() -> int {
    auto socket = UdpSocket::bind();
    if (!socket) {
      return 2;
    }
    int failed = 0;
    for (const std::uint16_t port : {data_port, d.discovery_port}) {
      for (const auto& g : garbage) {
        failed += socket->send_to(target, port, g.bytes) ? 0 : 1;
        ::usleep(500);  // traffic, not a flood: every datagram should reach the parser
      }
    }
    return failed == 0 ? 0 : 1;
  });
  ASSERT_EQ(attacker.wait(milliseconds(30'000)), 0) << attacker.output();

  const auto s = summary_of(sub, milliseconds(60'000));
  stop_publisher(pub);
  ASSERT_TRUE(s) << "subscriber: " << sub.output();
  expect_complete_and_in_order(*s, count);
  EXPECT_GE(s->number("datagrams_refused"), 2 * garbage.size())
      << garbage.size() << " hostile datagrams sent to each of 2 ports: " << s->line();
  EXPECT_EQ(sub.wait(kExitTimeout), 0) << "the subscriber did not survive the garbage";
}

TEST_F(MultihostTest, TheSameProgramsUseSharedMemoryOnOneHostAndUdpAcrossTwo) {
  const std::uint64_t count = 200;
  const auto args = message_args("net/placed", 2048, count) + std::vector<std::string>{"--timeout-ms", "30000"};
  for (const std::size_t listener_host : {0U, 1U}) {
    SCOPED_TRACE(listener_host == 0 ? "both nodes on h0" : "talker on h0, listener on h1");
    Deployment d = deployment();
    d.nodes = {{"talker", 0}, {"listener", listener_host}};
    d.topics = {{.name = "net/placed", .reliability = "reliable", .depth = 64, .history = "keep_all"}};
    const std::string config = write_config(d, "placement" + std::to_string(listener_host));
    // The same two command lines both times; only the file differs.
    ChildProcess sub = start_subscriber(listener_host, config, "listener", args);
    ChildProcess pub = start_peer(
        0, config, "talker", "publisher",
        args + std::vector<std::string>{"--rate-hz", "500", "--wait-subscribers", "1", "--linger-ms", "30000"});
    // Where the messages go, as the talker saw it before it sent them.
    const auto subscribed = pub.wait_for_line("SUBSCRIBED", kStartTimeout);
    ASSERT_TRUE(subscribed) << "talker: " << pub.output();
    const PeerSummary routes(*subscribed);
    const auto s = summary_of(sub, milliseconds(30'000));
    const auto p = stop_publisher(pub);
    ASSERT_TRUE(s) << "listener: " << sub.output();
    ASSERT_TRUE(p) << "talker: " << pub.output();
    expect_complete_and_in_order(*s, count);
    if (listener_host == 0) {
      EXPECT_EQ(routes.number("local_subscribers"), 1U) << routes.line();
      EXPECT_EQ(routes.number("remote_subscribers"), 0U) << routes.line();
      EXPECT_EQ(routes.text("routes").find(":udp:"), std::string::npos) << routes.line();
      EXPECT_EQ(p->number("messages_sent"), 0U) << "shared memory only: " << p->line();
      EXPECT_EQ(s->number("messages_received"), 0U) << s->line();
    } else {
      EXPECT_EQ(routes.number("local_subscribers"), 0U) << routes.line();
      EXPECT_EQ(routes.number("remote_subscribers"), 1U) << routes.line();
      EXPECT_NE(routes.text("routes").find("h1:udp:1"), std::string::npos) << routes.line();
      EXPECT_EQ(p->number("messages_sent"), count) << p->line();
      EXPECT_EQ(s->number("messages_received"), count) << s->line();
    }
  }
}

}  // namespace
}  // namespace axon::test
