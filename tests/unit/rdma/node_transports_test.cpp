// The same two programs over shared memory, UDP and RDMA with only the
// config changed: axon_net_peer as publisher (node 'na') and as RELIABLE
// subscriber (node 'nb'), run three times with three deployment files:
// both nodes on host a; host a and host b with the topic `transport: udp`;
// the same with `transport: rdma`. Each run delivers every message intact and
// in order, and the programs' routes and counters say which transport
// carried them. Guest only (host b is 10.0.2.16 on the guest's rxe0).
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/host_process.hpp"
#include "tests/unit/rdma/two_hosts.hpp"

namespace axon::rdma_test {
namespace {

constexpr std::uint64_t kCount = 300;

/// Host a (and host b unless `one_host`), both naming the device; nodes na
/// on a and nb on b (or a); topic net/test with `transport`.
std::string deployment_for(bool one_host, const std::string& transport) {
  const std::string device = env("AXON_RDMA_EXPECT_DEVICE");
  std::string yaml = "hosts:\n  - {name: a, address: 10.0.2.15, rdma_device: " + device + "}\n";
  if (!one_host) {
    yaml += "  - {name: b, address: 10.0.2.16, rdma_device: " + device + "}\n";
  }
  yaml += "nodes:\n  - {name: na, host: a}\n  - {name: nb, host: " + std::string(one_host ? "a" : "b") +
          "}\ntopics:\n  - {name: net/test, transport: " + transport + "}\n";
  if (!one_host) {
    yaml += "udp:\n  discovery: {static_peers: [a, b], port: 27430}\n";
  }
  return yaml;
}

/// What both programs printed at the end of one run.
struct Reports {
  std::optional<test::PeerSummary> matched;  ///< The publisher's SUBSCRIBED line: its routes before it sends.
  std::optional<test::PeerSummary> publisher;
  std::optional<test::PeerSummary> subscriber;
};

class RdmaNodeTransportsOnDevice : public TwoHostsOnDevice {
 protected:
  /// axon_net_peer as `node` of `config` with its shared memory in `shm`.
  static test::ChildProcess net_peer(const std::string& config, const std::string& node, const std::string& shm,
                                     const std::vector<std::string>& args) {
    std::vector<std::string> argv{
        test::net_peer_path(), "--config", config, "--node", node, "--topic", "net/test", "--bytes", "2048", "--count",
        std::to_string(kCount)};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string domain = std::to_string(kDomain);
    return test::ChildProcess::spawn(argv, [shm, domain]() -> std::string {
      // NOLINTNEXTLINE(concurrency-mt-unsafe): in the forked child, before exec
      if (setenv("AXON_SHM_DIR", shm.c_str(), 1) != 0 || setenv("AXON_DOMAIN", domain.c_str(), 1) != 0) {
        return "setenv failed";
      }
      return "";
    });
  }

  /// Runs the subscriber, then the publisher, with the file `name` holding
  /// `yaml`; 'nb' keeps its shared memory in host b's directory unless both
  /// nodes are on host a.
  Reports run(const std::string& name, const std::string& yaml, bool one_host) {
    const std::string file = dir.write(name + ".yaml", yaml);
    const std::string b_dir = dir.path() + "/" + name + "-b";
    const std::string a_dir = dir.path() + "/" + name + "-a";
    EXPECT_EQ(::mkdir(a_dir.c_str(), 0700), 0);
    EXPECT_EQ(::mkdir(b_dir.c_str(), 0700), 0);
    Reports run;
    auto sub =
        net_peer(file, "nb", one_host ? a_dir : b_dir, {"--role", "subscriber", "--reliable", "--timeout-ms", "60000"});
    if (!sub.wait_for_line("READY", kWait)) {
      ADD_FAILURE() << name << ": subscriber: " << sub.output();
      return run;
    }
    auto pub = net_peer(file, "na", a_dir,
                        {"--role", "publisher", "--wait-subscribers", "1", "--resend-dropped", "--linger-ms", "60000",
                         "--timeout-ms", "60000"});
    if (const auto line = pub.wait_for_line("SUBSCRIBED", kWait)) {
      run.matched.emplace(*line);
    }
    if (const auto line = sub.wait_for_line("SUMMARY", milliseconds(60000))) {
      run.subscriber.emplace(*line);
    }
    // The publisher stays (for NACKs) until told to go; then it reports.
    if (pub.wait_for_line("SENT", kWait)) {
      pub.kill(SIGTERM);
      if (const auto line = pub.wait_for_line("PUBLISHER", kWait)) {
        run.publisher.emplace(*line);
      }
    }
    EXPECT_TRUE(run.subscriber && run.publisher)
        << name << ": subscriber: " << sub.output() << "\npublisher: " << pub.output();
    if (run.subscriber && run.publisher) {
      std::printf("%s:\n  %s\n  %s\n", name.c_str(), run.publisher->line().c_str(), run.subscriber->line().c_str());
    }
    return run;
  }

  /// Every message received once, whole and in order.
  static void expect_all_delivered(const Reports& run) {
    ASSERT_TRUE(run.matched && run.subscriber && run.publisher);
    const test::PeerSummary& s = *run.subscriber;
    EXPECT_EQ(s.number("done"), 1U) << s.line();
    EXPECT_EQ(s.number("received"), kCount) << s.line();
    EXPECT_EQ(s.number("missing") + s.number("out_of_order") + s.number("duplicates") + s.number("corrupt"), 0U)
        << s.line();
    EXPECT_EQ(run.publisher->number("sent"), kCount) << run.publisher->line();
    EXPECT_EQ(run.publisher->number("failed"), 0U) << run.publisher->line();
  }

  /// Counter names: the publisher's of messages sent, the subscriber's of messages received.
  struct Counted {
    const char* sent;
    const char* received;
  };

  /// Every message delivered, to host b by `transport`: the publisher's
  /// route and counters say so, and those of the other network transport
  /// did not move.
  static void expect_carried_by(const Reports& run, const std::string& transport, Counted by, Counted not_by) {
    expect_all_delivered(run);
    ASSERT_TRUE(run.matched && run.publisher && run.subscriber);
    EXPECT_EQ(run.publisher->text("transport_for"), transport);
    EXPECT_EQ(run.matched->text("routes"), "a:shm:0:best_effort,b:" + transport + ":1:reliable");
    EXPECT_EQ(run.publisher->number(by.sent), kCount) << run.publisher->line();
    EXPECT_EQ(run.subscriber->number(by.received), kCount) << run.subscriber->line();
    EXPECT_EQ(run.publisher->number(not_by.sent) + run.subscriber->number(not_by.received), 0U)
        << "nothing by the other transport";
  }
};

TEST_F(RdmaNodeTransportsOnDevice, TheSameTwoProgramsCarryTheTopicOverShmUdpAndRdmaAsTheirConfigSays) {
  const Reports shm = run("shm", deployment_for(true, "shm"), true);
  expect_all_delivered(shm);
  ASSERT_TRUE(shm.matched && shm.publisher && shm.subscriber);
  EXPECT_EQ(shm.publisher->text("transport_for"), "shm");
  EXPECT_EQ(shm.matched->text("routes"), "a:shm:0:best_effort") << "no other host";
  EXPECT_EQ(shm.matched->number("local_subscribers"), 1U);
  for (const test::PeerSummary* s : {&*shm.publisher, &*shm.subscriber}) {
    EXPECT_EQ(s->number("datagrams_sent") + s->number("messages_received") + s->number("rdma_messages_sent") +
                  s->number("rdma_messages_received"),
              0U)
        << "no network: " << s->line();
  }

  const Reports udp = run("udp", deployment_for(false, "udp"), false);
  expect_carried_by(udp, "udp", {"messages_sent", "messages_received"},
                    {"rdma_messages_sent", "rdma_messages_received"});

  const Reports rdma = run("rdma", deployment_for(false, "rdma"), false);
  expect_carried_by(rdma, "rdma", {"rdma_messages_sent", "rdma_messages_received"},
                    {"messages_sent", "messages_received"});
  ASSERT_TRUE(rdma.publisher);
  EXPECT_EQ(rdma.publisher->number("dropped"), rdma.publisher->number("rdma_credit_drops") +
                                                   rdma.publisher->number("rdma_credit_timeouts") +
                                                   rdma.publisher->number("rdma_no_stream_drops"))
      << "each drop counted by its reason (the publisher sends each again until it is written)";
}

}  // namespace
}  // namespace axon::rdma_test
