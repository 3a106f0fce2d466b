// Graph events across hosts: a node on virtual host h0 that neither
// publishes nor subscribes a topic waits for (Node::wait_for_graph) and gets
// callbacks on (Node::on_graph_event) a publisher of it on host h1 that
// appears, and leaves when its process is SIGKILLed (the participant is lost
// after the liveliness timeout). Needs root; skipped otherwise
// (tests/support/virtual_hosts_test.hpp).
#include <csignal>
#include <string>
#include <vector>

#include "tests/support/child_process.hpp"
#include "tests/support/common/temp_dir.hpp"
#include "tests/support/deployment_yaml.hpp"
#include "tests/support/host_process.hpp"
#include "tests/support/virtual_hosts_test.hpp"

namespace axon::test {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kStartTimeout{15'000};

class MultihostGraph : public VirtualHostsTest {
 protected:
  void SetUp() override {
    VirtualHostsTest::SetUp();
    if (IsSkipped()) {
      return;
    }
    auto hosts = VirtualHosts::create({.hosts = 2});
    ASSERT_TRUE(hosts) << hosts.error().message();
    virtual_hosts.emplace(std::move(*hosts));
  }

  ChildProcess start_peer(std::size_t k, const std::string& config, const std::string& node,
                          const std::vector<std::string>& args) {
    std::vector<std::string> argv{net_peer_path(), "--config", config, "--node", node};
    argv.insert(argv.end(), args.begin(), args.end());
    return spawn_on_host(*virtual_hosts, k, argv);
  }

  std::optional<VirtualHosts> virtual_hosts;
  TempDir config_dir{"axon-multihost-graph"};
};

TEST_F(MultihostGraph, APublisherOfAnotherHostAppearsAndLeavesWhenItsProcessIsKilled) {
  Deployment d;
  d.domain = unique_domain();
  d.nodes = {{"watcher", 0}, {"pub", 1}};
  d.topics = {{.name = "net/graph"}};
  const std::string config = config_dir.write("deploy.yaml", to_yaml(d, *virtual_hosts));
  ChildProcess watcher =
      start_peer(0, config, "watcher", {"--role", "graph-watcher", "--topic", "net/graph", "--timeout-ms", "30000"});
  ASSERT_TRUE(watcher.wait_for_line("WATCHING", kStartTimeout)) << watcher.output();
  ChildProcess pub = start_peer(1, config, "pub",
                                {"--role", "publisher", "--topic", "net/graph", "--bytes", "64", "--count", "1000000",
                                 "--rate-hz", "10", "--timeout-ms", "60000"});

  const auto appeared = watcher.wait_for_line("APPEARED", kStartTimeout);
  ASSERT_TRUE(appeared) << "watcher: " << watcher.output() << "\npublisher: " << pub.output();
  EXPECT_EQ(*appeared, "APPEARED host=h1");

  pub.kill(SIGKILL);
  EXPECT_EQ(pub.wait(milliseconds(10'000)), 128 + SIGKILL);
  // Lost after the liveliness timeout, plus slack for a loaded 2-core machine.
  const auto left = watcher.wait_for_line("LEFT", milliseconds(d.liveliness_timeout_ms + 6'000));
  ASSERT_TRUE(left) << "watcher: " << watcher.output();
  EXPECT_EQ(*left, "LEFT host=h1");
  EXPECT_EQ(watcher.wait(milliseconds(10'000)), 0) << watcher.output();
  EXPECT_NE(watcher.output().find("WAITED host=h1"), std::string::npos)
      << "wait_for_graph() did not see the publisher of h1: " << watcher.output();
}

}  // namespace
}  // namespace axon::test
