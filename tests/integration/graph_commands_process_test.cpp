// `axon topic list/info`, `axon node list/info` and `axon clean` against real node processes: what the children
// advertised and subscribed shows with their pids and QoS; a killed node shows as dead until `axon clean`, which
// refuses while a node lives and afterwards leaves nothing of the domain behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/common/run_command.hpp"
#include "tests/support/pty_child.hpp"
#include "tests/support/test_messages.hpp"
#include "tests/support/two_host_loopback.hpp"

namespace axon::tools {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
using test::TestMessage;

const std::string kAxon = AXON_CLI;
/// Each test's own domain (ctest runs the tests of this file in parallel, each in its own process): 9300 and up,
/// from the test's name.
std::uint32_t test_domain() {
  const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  return 9300 + static_cast<std::uint32_t>(std::hash<std::string>{}(name) % 600);
}

test::CommandOutput axon(std::vector<std::string> args) {
  args.insert(args.begin(), {kAxon, "--domain", std::to_string(test_domain())});
  return test::run_command(args);
}

/// A node named `name` that advertises "cli/objects" (publisher) or subscribes it with a depth of 8 and
/// reject_newest (subscriber), says READY, and runs until killed.
ChildProcess node_child(const std::string& name, bool publisher) {
  const std::uint32_t domain = test_domain();
  return ChildProcess::fork_and_run([name, publisher, domain]() -> int {
    NodeOptions options;
    options.domain_id = domain;
    auto node = Node::create(name, options);
    if (!node) {
      return 1;
    }
    std::shared_ptr<Publisher<TestMessage>> pub;
    std::shared_ptr<Subscriber<TestMessage>> sub;
    if (publisher) {
      auto made = (*node)->advertise<TestMessage>("cli/objects");
      if (!made) {
        return 2;
      }
      pub = *made;
    } else {
      SubscriberQos qos;
      qos.depth = 8;
      qos.overflow = Overflow::kRejectNewest;
      auto made = (*node)->subscribe<TestMessage>("cli/objects", qos);
      if (!made) {
        return 3;
      }
      sub = *made;
    }
    std::printf("READY\n");
    std::fflush(stdout);
    for (;;) {
      ::pause();
    }
  });
}

/// "cli_camera": publishes 5 messages on "cli/objects", each until one subscriber queued it, says PUBLISHED,
/// and runs until killed.
ChildProcess publishing_child() {
  const std::uint32_t domain = test_domain();
  return ChildProcess::fork_and_run([domain]() -> int {
    NodeOptions options;
    options.domain_id = domain;
    auto node = Node::create("cli_camera", options);
    auto pub = node ? (*node)->advertise<TestMessage>("cli/objects") : Error(ErrorCode::kClosed, "no node");
    if (!pub ||
        !(*node)->wait_for_endpoints("cli/objects", GraphEndpointKind::kSubscriber, 1, std::chrono::seconds(20))) {
      return 1;
    }
    for (int sent = 0; sent < 5;) {
      auto loan = (*pub)->loan();
      if (!loan) {
        return 2;
      }
      const PublishResult result = (*pub)->publish(std::move(*loan));
      sent += result.ok() && result.status().delivered == 1 ? 1 : 0;  // not yet connected: sent again
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::printf("PUBLISHED\n");
    std::fflush(stdout);
    for (;;) {
      ::pause();
    }
  });
}

/// "cli_planner": subscribes "cli/objects" (depth 8), takes 3 messages and keeps them, says HELD, runs until
/// killed.
ChildProcess holding_child() {
  const std::uint32_t domain = test_domain();
  return ChildProcess::fork_and_run([domain]() -> int {
    NodeOptions options;
    options.domain_id = domain;
    auto node = Node::create("cli_planner", options);
    SubscriberQos qos;
    qos.depth = 8;
    auto sub = node ? (*node)->subscribe<TestMessage>("cli/objects", qos) : Error(ErrorCode::kClosed, "no node");
    if (!sub) {
      return 1;
    }
    std::printf("READY\n");
    std::fflush(stdout);
    std::vector<Sample<TestMessage>> held;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (held.size() < 3 && std::chrono::steady_clock::now() < give_up) {
      if (auto sample = (*sub)->take()) {
        held.push_back(std::move(*sample));
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
    if (held.size() < 3) {
      return 2;
    }
    std::printf("HELD\n");
    std::fflush(stdout);
    for (;;) {
      ::pause();
    }
  });
}

/// "cli_ticker" publishes on "cli/ticks" every 5 ms (about 200 Hz) and "cli_drain" takes everything: a topic with a
/// known rate. Another `topic` and `period` make another ticker.
ChildProcess ticking_child(const std::string& topic = "cli/ticks", std::chrono::milliseconds period = 5ms) {
  const std::uint32_t domain = test_domain();
  return ChildProcess::fork_and_run([domain, topic, period]() -> int {
    NodeOptions options;
    options.domain_id = domain;
    auto node = Node::create("cli_ticker", options);
    auto pub = node ? (*node)->advertise<TestMessage>(topic) : Error(ErrorCode::kClosed, "no node");
    if (!pub) {
      return 1;
    }
    std::printf("READY\n");
    std::fflush(stdout);
    auto next = std::chrono::steady_clock::now();
    for (;;) {
      if (auto loan = (*pub)->loan()) {
        (void)(*pub)->publish(std::move(*loan));
      }
      next += period;
      std::this_thread::sleep_until(next);
    }
  });
}

ChildProcess draining_child() {
  const std::uint32_t domain = test_domain();
  return ChildProcess::fork_and_run([domain]() -> int {
    NodeOptions options;
    options.domain_id = domain;
    auto node = Node::create("cli_drain", options);
    auto sub = node ? (*node)->subscribe<TestMessage>("cli/ticks") : Error(ErrorCode::kClosed, "no node");
    if (!sub) {
      return 1;
    }
    std::printf("READY\n");
    std::fflush(stdout);
    for (;;) {
      while ((*sub)->take()) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
}

/// Waits (at most 20 s) until a subscriber of `topic` has a measured take in its node's statistics: the drain's
/// connection to a new publisher may take a liveness round on a loaded machine.
bool takes_measured(const std::string& topic) {
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < give_up) {
    const test::CommandOutput delay = axon({"topic", "delay", topic, "--count", "1", "--json"});
    const YAML::Node subscribers = YAML::Load(delay.output)["rounds"][0]["subscribers"];
    if (delay.exit_code == 0 && subscribers.size() > 0 && subscribers[0]["count"].as<std::uint64_t>() > 0) {
      return true;
    }
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

bool domain_files_left() {
  const std::string prefix = "axon_d" + std::to_string(test_domain());
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix + "_") || name == prefix + ".lock") {
      return true;
    }
  }
  return false;
}

class AxonGraphCommands : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(axon({"clean"}).exit_code, 0) << "a previous run's files"; }
  void TearDown() override {
    children.clear();  // SIGKILL and reap
    (void)axon({"clean"});
  }
  void start_both() {
    children.push_back(node_child("cli_camera", true));
    children.push_back(node_child("cli_planner", false));
    for (ChildProcess& child : children) {
      ASSERT_TRUE(child.wait_for_line("READY", 20s)) << child.output();
    }
  }
  std::vector<ChildProcess> children;
};

TEST_F(AxonGraphCommands, TopicListShowsTheTopicWithItsTypeAndEndpoints) {
  start_both();
  const test::CommandOutput run = axon({"topic", "list", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node doc = YAML::Load(run.output);
  EXPECT_TRUE(doc["exists"].as<bool>());
  EXPECT_EQ(doc["domain"].as<std::uint32_t>(), test_domain());
  ASSERT_EQ(doc["topics"].size(), 1U) << run.output;
  const YAML::Node topic = doc["topics"][0];
  EXPECT_EQ(topic["name"].as<std::string>(), "cli/objects");
  EXPECT_EQ(topic["type"].as<std::string>(), "axon_test::TestMessage");
  EXPECT_EQ(topic["serializer"].as<std::string>(), "raw");
  EXPECT_EQ(topic["publishers"].as<int>(), 1);
  EXPECT_EQ(topic["subscribers"].as<int>(), 1);
  ASSERT_EQ(topic["transports"].size(), 1U) << run.output;
  EXPECT_EQ(topic["transports"][0].as<std::string>(), "shm") << "no deployment file: this host only";

  const test::CommandOutput text = axon({"topic", "list"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.output.find("cli/objects  axon_test::TestMessage  raw"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("RATE_HZ  TRANSPORT\n"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("  shm\n"), std::string::npos) << text.output;
}

TEST(AxonTopicTransport, TopicListAndInfoNameUdpForATopicThatGoesToAnotherHostAndShmForOneThatStays) {
  // Node `sender` of host alpha in a two-host file: `auto` between hosts without an RDMA device is UDP, and
  // `transport: shm` keeps a topic on this host.
  test::TwoHostLoopback hosts{"axon_cli_transport", {.topics = "  - {name: cli/stays, transport: shm}\n"}};
  std::shared_ptr<Node> node = hosts.node("sender", "a");
  ASSERT_NE(node, nullptr);
  auto remote = node->advertise<TestMessage>("cli/travels");
  auto local = node->advertise<TestMessage>("cli/stays");
  ASSERT_TRUE(remote && local);
  const std::vector<std::string> prefix = {"env", "AXON_SHM_DIR=" + hosts.shm_dir("a"), kAxon, "--domain",
                                           std::to_string(hosts.domain())};
  const auto axon_on_alpha = [&prefix](std::vector<std::string> args) {
    args.insert(args.begin(), prefix.begin(), prefix.end());
    return test::run_command(args);
  };

  const test::CommandOutput list = axon_on_alpha({"topic", "list", "--window", "0", "--json"});
  const test::CommandOutput info = axon_on_alpha({"topic", "info", "cli/travels", "--json"});
  const test::CommandOutput text = axon_on_alpha({"topic", "list", "--window", "0"});

  ASSERT_EQ(list.exit_code, 0) << list.output;
  std::map<std::string, std::vector<std::string>> transports;
  for (const YAML::Node& topic : YAML::Load(list.output)["topics"]) {
    transports[topic["name"].as<std::string>()] = topic["transports"].as<std::vector<std::string>>();
  }
  EXPECT_EQ(transports["cli/travels"], std::vector<std::string>{"udp"}) << list.output;
  EXPECT_EQ(transports["cli/stays"], std::vector<std::string>{"shm"}) << list.output;
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_EQ(YAML::Load(info.output)["endpoints"][0]["transport"].as<std::string>(), "udp") << info.output;
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("  udp\n"), std::string::npos) << text.output;
}

TEST_F(AxonGraphCommands, TopicListMeasuresEachTopicsRateOverItsWindow) {
  children.push_back(draining_child());
  ASSERT_TRUE(children[0].wait_for_line("READY", 20s)) << children[0].output();
  children.push_back(ticking_child());
  ASSERT_TRUE(children[1].wait_for_line("READY", 20s)) << children[1].output();

  const test::CommandOutput run = axon({"topic", "list", "--window", "2", "--json"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node doc = YAML::Load(run.output);
  EXPECT_EQ(doc["rate_window_s"].as<double>(), 2.0);
  ASSERT_EQ(doc["topics"].size(), 1U) << run.output;
  const YAML::Node topic = doc["topics"][0];
  EXPECT_EQ(topic["name"].as<std::string>(), "cli/ticks");
  // The ticker publishes every 5 ms on an absolute schedule (a late tick is made up at once), so 2 s hold about
  // 400 messages whatever the load; the bound covers the time the two reads of the counters take.
  EXPECT_NEAR(topic["rate_hz"].as<double>(), 200.0, 20.0) << run.output;

  const test::CommandOutput text = axon({"topic", "list", "--window", "0.5"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.output.find("RATE_HZ"), std::string::npos) << text.output;
  const std::size_t row = text.output.find("cli/ticks");
  ASSERT_NE(row, std::string::npos) << text.output;
  const std::string line = text.output.substr(row, text.output.find('\n', row) - row);
  std::istringstream columns(line);
  std::vector<std::string> cells{std::istream_iterator<std::string>(columns), std::istream_iterator<std::string>()};
  ASSERT_EQ(cells.size(), 7U) << text.output;
  EXPECT_EQ(cells[6], "shm") << text.output;
  const std::string& rate = cells[5];
  ASSERT_NE(rate, "-") << text.output;
  EXPECT_GT(std::stod(rate), 100.0) << text.output;  // a short window: only its order of magnitude
  EXPECT_LT(std::stod(rate), 400.0) << text.output;

  const test::CommandOutput unmeasured = axon({"topic", "list", "--window", "0", "--json"});
  ASSERT_EQ(unmeasured.exit_code, 0) << unmeasured.output;
  EXPECT_TRUE(YAML::Load(unmeasured.output)["topics"][0]["rate_hz"].IsNull()) << unmeasured.output;
}

TEST_F(AxonGraphCommands, TopicListAndMonitorShowTheRateOfATopicWithoutSubscriberFromItsPublishersCounts) {
  children.push_back(ticking_child());
  ASSERT_TRUE(children[0].wait_for_line("READY", 20s)) << children[0].output();

  const test::CommandOutput list = axon({"topic", "list", "--window", "2", "--json"});
  const test::CommandOutput monitor = axon({"monitor", "--count", "2", "--interval", "2", "--json"});

  ASSERT_EQ(list.exit_code, 0) << list.output;
  SCOPED_TRACE(list.output);  // a member that is null where a number is expected throws
  const YAML::Node topics = YAML::Load(list.output)["topics"];
  ASSERT_EQ(topics.size(), 1U);
  EXPECT_EQ(topics[0]["subscribers"].as<int>(), 0);
  // No queue on this host: the publisher's own count of what it published (every 5 ms on an absolute schedule,
  // so 2 s hold about 400 whatever the load).
  EXPECT_NEAR(topics[0]["rate_hz"].as<double>(), 200.0, 20.0);
  ASSERT_EQ(monitor.exit_code, 0) << monitor.output;
  SCOPED_TRACE(monitor.output);
  const YAML::Node rounds = YAML::Load(monitor.output)["rounds"];
  ASSERT_EQ(rounds.size(), 2U);
  EXPECT_NEAR(rounds[1]["topics"][0]["rate_hz"].as<double>(), 200.0, 20.0) << "the same count, the same rate";
}

TEST_F(AxonGraphCommands, TopicInfoNamesEachEndpointsNodePidAndQueue) {
  start_both();
  const test::CommandOutput run = axon({"topic", "info", "cli/objects", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node doc = YAML::Load(run.output);
  EXPECT_EQ(doc["type_size"].as<int>(), static_cast<int>(sizeof(TestMessage)));
  ASSERT_EQ(doc["endpoints"].size(), 2U) << run.output;
  const YAML::Node pub = doc["endpoints"][0];
  const YAML::Node sub = doc["endpoints"][1];
  EXPECT_EQ(pub["kind"].as<std::string>(), "publisher");
  EXPECT_EQ(pub["node"].as<std::string>(), "cli_camera");
  EXPECT_EQ(pub["pid"].as<pid_t>(), children[0].pid());
  EXPECT_TRUE(pub["alive"].as<bool>());
  EXPECT_EQ(sub["kind"].as<std::string>(), "subscriber");
  EXPECT_EQ(sub["node"].as<std::string>(), "cli_planner");
  EXPECT_EQ(sub["pid"].as<pid_t>(), children[1].pid());
  EXPECT_EQ(sub["depth"].as<int>(), 8);
  EXPECT_EQ(sub["overflow"].as<std::string>(), "reject_newest");
  EXPECT_EQ(sub["reliability"].as<std::string>(), "best_effort");
  EXPECT_EQ(pub["transport"].as<std::string>(), "shm");
  EXPECT_EQ(sub["transport"].as<std::string>(), "shm");

  const test::CommandOutput missing = axon({"topic", "info", "cli/nothing"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("no topic 'cli/nothing' in domain " + std::to_string(test_domain())), std::string::npos)
      << missing.output;
}

TEST_F(AxonGraphCommands, NodeListAndInfoShowTheProcessesAndTheirEndpoints) {
  start_both();
  const test::CommandOutput list = axon({"node", "list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  const YAML::Node nodes = YAML::Load(list.output)["nodes"];
  ASSERT_EQ(nodes.size(), 2U) << list.output;
  for (const YAML::Node& n : nodes) {
    const bool camera = n["name"].as<std::string>() == "cli_camera";
    EXPECT_EQ(n["pid"].as<pid_t>(), children[camera ? 0 : 1].pid());
    EXPECT_TRUE(n["alive"].as<bool>());
    EXPECT_EQ(n["publishers"].as<int>(), camera ? 1 : 0);
    EXPECT_EQ(n["subscribers"].as<int>(), camera ? 0 : 1);
    EXPECT_GT(n["pool_bytes"].as<std::uint64_t>(), 0U);
  }

  const test::CommandOutput info = axon({"node", "info", "cli_planner"});
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("pid " + std::to_string(children[1].pid()) + ", alive: yes"), std::string::npos)
      << info.output;
  EXPECT_NE(info.output.find("subscriber  cli/objects  axon_test::TestMessage  depth 8, reject_newest, best_effort"),
            std::string::npos)
      << info.output;
  EXPECT_EQ(axon({"node", "info", "nobody"}).exit_code, 1);
}

TEST_F(AxonGraphCommands, CleanRefusesWhileANodeLivesThenRemovesWhatTheKilledOnesLeft) {
  start_both();
  const test::CommandOutput refused = axon({"clean"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.output.find("in use by"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("node 'cli_camera' (pid " + std::to_string(children[0].pid()) + ")"), std::string::npos)
      << refused.output;
  EXPECT_TRUE(domain_files_left());

  for (ChildProcess& child : children) {
    child.kill(SIGKILL);
    EXPECT_EQ(child.wait(10s), 128 + SIGKILL);
  }
  // The last one killed stays in the registry, shown dead (the other may have
  // been reclaimed by it meanwhile): nobody is left to reclaim it.
  const test::CommandOutput list = axon({"node", "list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  const YAML::Node nodes = YAML::Load(list.output)["nodes"];
  ASSERT_GE(nodes.size(), 1U) << list.output;
  for (const YAML::Node& n : nodes) {
    EXPECT_FALSE(n["alive"].as<bool>()) << list.output;
  }

  const test::CommandOutput cleaned = axon({"clean", "--json"});
  ASSERT_EQ(cleaned.exit_code, 0) << cleaned.output;
  const YAML::Node removed = YAML::Load(cleaned.output)["removed"];
  bool registry = false;
  for (const YAML::Node& path : removed) {
    registry = registry || path.as<std::string>().ends_with("axon_d" + std::to_string(test_domain()) + "_registry");
  }
  EXPECT_TRUE(registry) << cleaned.output;
  EXPECT_FALSE(domain_files_left());

  const test::CommandOutput after = axon({"topic", "list", "--json"});
  EXPECT_EQ(after.exit_code, 0);
  EXPECT_FALSE(YAML::Load(after.output)["exists"].as<bool>()) << after.output;
  const test::CommandOutput again = axon({"clean"});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.output.find("nothing of domain " + std::to_string(test_domain())), std::string::npos) << again.output;
}

TEST_F(AxonGraphCommands, PoolNamesTheSubscriberThatHoldsChunksAndHowOldTheyAre) {
  children.push_back(holding_child());
  ASSERT_TRUE(children[0].wait_for_line("READY", 20s)) << children[0].output();
  children.push_back(publishing_child());
  ASSERT_TRUE(children[1].wait_for_line("PUBLISHED", 30s)) << children[1].output();
  ASSERT_TRUE(children[0].wait_for_line("HELD", 30s)) << children[0].output();
  std::this_thread::sleep_for(20ms);  // so the oldest is measurably old

  const test::CommandOutput run = axon({"pool", "cli_camera", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node pools = YAML::Load(run.output)["pools"];
  ASSERT_EQ(pools.size(), 1U) << run.output;
  EXPECT_TRUE(pools[0]["read"].as<bool>()) << run.output;
  EXPECT_EQ(pools[0]["pid"].as<pid_t>(), children[1].pid());
  std::uint32_t held_classes = 0;
  for (const YAML::Node& c : pools[0]["classes"]) {
    EXPECT_EQ(c["free"].as<std::uint32_t>() + c["by_subscribers"].as<std::uint32_t>() + c["loaned"].as<std::uint32_t>(),
              c["total"].as<std::uint32_t>())
        << run.output;
    if (c["by_subscribers"].as<std::uint32_t>() == 0) {
      EXPECT_EQ(c["holders"].size(), 0U);
      continue;
    }
    ++held_classes;
    EXPECT_GE(c["payload_bytes"].as<std::uint32_t>(), sizeof(TestMessage));
    EXPECT_EQ(c["by_subscribers"].as<std::uint32_t>(), 5U) << "3 taken and held, 2 queued: " << run.output;
    EXPECT_GE(c["oldest_in_use_age_ns"].as<std::int64_t>(), 20'000'000) << run.output;
    ASSERT_EQ(c["holders"].size(), 1U) << run.output;
    const YAML::Node holder = c["holders"][0];
    EXPECT_EQ(holder["node"].as<std::string>(), "cli_planner");
    EXPECT_EQ(holder["pid"].as<pid_t>(), children[0].pid());
    EXPECT_EQ(holder["topic"].as<std::string>(), "cli/objects");
    EXPECT_EQ(holder["chunks"].as<std::uint32_t>(), 5U);
    ASSERT_EQ(c["publishers"].size(), 1U) << run.output;
    EXPECT_EQ(c["publishers"][0]["topic"].as<std::string>(), "cli/objects");
    EXPECT_EQ(c["publishers"][0]["chunks"].as<std::uint32_t>(), 5U);
  }
  EXPECT_EQ(held_classes, 1U) << run.output;

  const test::CommandOutput text = axon({"pool", "cli_camera"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.output.find("5 chunks held by the subscriber of cli/objects in node cli_planner (pid " +
                             std::to_string(children[0].pid()) + ")"),
            std::string::npos)
      << text.output;

  // The queue's counters, from the publisher's pool: all 5 delivered, 2 still queued of 8.
  const test::CommandOutput info = axon({"topic", "info", "cli/objects", "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.output;
  const YAML::Node doc = YAML::Load(info.output);
  ASSERT_EQ(doc["queues"].size(), 1U) << info.output;
  const YAML::Node queue = doc["queues"][0];
  EXPECT_EQ(queue["delivered"].as<int>(), 5);
  EXPECT_EQ(queue["queued"].as<int>(), 2);
  EXPECT_EQ(queue["depth"].as<int>(), 8);
  EXPECT_EQ(queue["dropped_full"].as<int>() + queue["dropped_oldest"].as<int>(), 0);
  EXPECT_GE(queue["high_water"].as<int>(), 2) << "at least the 2 queued now" << info.output;
  for (const YAML::Node& e : doc["endpoints"]) {
    const char* id = e["kind"].as<std::string>() == "publisher" ? "publisher_id" : "subscriber_id";
    EXPECT_EQ(e["endpoint_id"].as<std::string>(), queue[id].as<std::string>()) << info.output;
  }

  // A stopped node cannot answer: reported, not waited for.
  ASSERT_TRUE(children[1].stop(10s));
  const test::CommandOutput info_stopped = axon({"topic", "info", "cli/objects", "--patience-ms", "200"});
  EXPECT_EQ(info_stopped.exit_code, 0) << info_stopped.output;
  EXPECT_NE(info_stopped.output.find("note: counters not read from node 'cli_camera'"), std::string::npos)
      << info_stopped.output;
  const test::CommandOutput stopped = axon({"pool", "cli_camera", "--patience-ms", "200"});
  EXPECT_EQ(stopped.exit_code, 1);
  EXPECT_NE(stopped.output.find("not read: no answer within 200 ms"), std::string::npos) << stopped.output;
  children[1].kill(SIGCONT);
}

TEST_F(AxonGraphCommands, MonitorMeasuresATopicsRateAndStopsByCountOrOnCtrlC) {
  children.push_back(draining_child());
  ASSERT_TRUE(children[0].wait_for_line("READY", 20s)) << children[0].output();
  children.push_back(ticking_child());
  ASSERT_TRUE(children[1].wait_for_line("READY", 20s)) << children[1].output();
  ASSERT_TRUE(takes_measured("cli/ticks"));

  const test::CommandOutput run = axon({"monitor", "--count", "4", "--interval", "0.5", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  SCOPED_TRACE(run.output);  // a member that is null where a number is expected throws
  const YAML::Node rounds = YAML::Load(run.output)["rounds"];
  ASSERT_EQ(rounds.size(), 4U) << run.output;
  EXPECT_TRUE(rounds[0]["topics"][0]["rate_hz"].IsNull()) << "no rate before a second look: " << run.output;
  const YAML::Node last = rounds[3]["topics"][0];
  EXPECT_EQ(last["name"].as<std::string>(), "cli/ticks");
  EXPECT_EQ(last["publishers"].as<int>(), 1);
  EXPECT_EQ(last["subscribers"].as<int>(), 1);
  // About 200 Hz; wide bounds: the machine is shared and a sleep may run late.
  EXPECT_GT(last["rate_hz"].as<double>(), 60.0) << run.output;
  EXPECT_LT(last["rate_hz"].as<double>(), 600.0) << run.output;
  EXPECT_DOUBLE_EQ(last["dropped_per_s"].as<double>(), 0.0) << run.output;
  // Bandwidth: the same publishes counted in payload bytes (read a moment apart: a message may fall between).
  const double bytes_per_message = last["bandwidth_bytes_per_s"].as<double>() / last["rate_hz"].as<double>();
  EXPECT_NEAR(bytes_per_message, static_cast<double>(sizeof(TestMessage)), 0.1 * sizeof(TestMessage)) << run.output;
  // Latency from the drain's takes, and its queue (default depth) as the fullest.
  EXPECT_GT(last["latency_p50_ns"].as<std::int64_t>(), 0) << run.output;
  EXPECT_LE(last["latency_p50_ns"].as<std::int64_t>(), last["latency_p99_ns"].as<std::int64_t>()) << run.output;
  EXPECT_EQ(last["fullest_queue"]["depth"].as<std::uint32_t>(), SubscriberQos{}.depth) << run.output;
  EXPECT_LE(last["fullest_queue"]["queued"].as<std::uint32_t>(), SubscriberQos{}.depth) << run.output;

  // Until Ctrl-C by default: SIGINT ends it with its one document.
  ChildProcess monitor =
      ChildProcess::spawn({kAxon, "--domain", std::to_string(test_domain()), "monitor", "--json", "--interval", "0.1"});
  std::this_thread::sleep_for(1500ms);  // past its start-up, when it handles SIGINT
  monitor.kill(SIGINT);
  EXPECT_EQ(monitor.wait(10s), 0) << monitor.output();
  const YAML::Node doc = YAML::Load(monitor.output());
  EXPECT_GE(doc["rounds"].size(), 1U) << monitor.output();
}

TEST_F(AxonGraphCommands, MonitorSortsTopicsByTheChosenFigureAndPrintsATablePerLookOverAPipe) {
  children.push_back(ticking_child("cli/b_fast", 5ms));  // about 200 Hz; second by name, first by rate
  ASSERT_TRUE(children[0].wait_for_line("READY", 20s)) << children[0].output();
  children.push_back(ticking_child("cli/a_slow", 50ms));  // about 20 Hz
  ASSERT_TRUE(children[1].wait_for_line("READY", 20s)) << children[1].output();

  const auto names = [](const YAML::Node& topics) {
    std::vector<std::string> out;
    for (const YAML::Node& t : topics) {
      out.push_back(t["name"].as<std::string>());
    }
    return out;
  };
  const test::CommandOutput by_name = axon({"monitor", "--count", "2", "--interval", "0.5", "--json"});
  ASSERT_EQ(by_name.exit_code, 0) << by_name.output;
  EXPECT_EQ(YAML::Load(by_name.output)["sort"].as<std::string>(), "name");
  EXPECT_EQ(names(YAML::Load(by_name.output)["rounds"][1]["topics"]),
            (std::vector<std::string>{"cli/a_slow", "cli/b_fast"}));

  const test::CommandOutput by_rate =
      axon({"monitor", "--count", "2", "--interval", "0.5", "--sort", "rate", "--json"});
  ASSERT_EQ(by_rate.exit_code, 0) << by_rate.output;
  const YAML::Node topics = YAML::Load(by_rate.output)["rounds"][1]["topics"];
  ASSERT_EQ(names(topics), (std::vector<std::string>{"cli/b_fast", "cli/a_slow"})) << by_rate.output;
  EXPECT_GT(topics[0]["rate_hz"].as<double>(), topics[1]["rate_hz"].as<double>()) << by_rate.output;
  // Bandwidth follows the rate: the same order.
  const test::CommandOutput by_bandwidth =
      axon({"monitor", "--count", "2", "--interval", "0.5", "--sort", "bandwidth", "--json"});
  ASSERT_EQ(by_bandwidth.exit_code, 0) << by_bandwidth.output;
  EXPECT_EQ(names(YAML::Load(by_bandwidth.output)["rounds"][1]["topics"]),
            (std::vector<std::string>{"cli/b_fast", "cli/a_slow"}));

  EXPECT_EQ(axon({"monitor", "--sort", "colour", "--count", "1"}).exit_code, 2) << "an unknown key is a usage error";

  // Over a pipe: one table per look, no terminal control sequences.
  const test::CommandOutput text = axon({"monitor", "--count", "2", "--interval", "0.3", "--sort", "rate"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_EQ(text.output.find('\x1b'), std::string::npos) << text.output;
  std::size_t tables = 0;
  for (std::size_t at = text.output.find("TOPIC"); at != std::string::npos; at = text.output.find("TOPIC", at + 1)) {
    ++tables;
  }
  EXPECT_EQ(tables, 2U) << text.output;
  for (const char* column : {"RATE_HZ", "BANDWIDTH", "P50_US", "P99_US", "DROPPED/S", "FULLEST"}) {
    EXPECT_NE(text.output.find(column), std::string::npos) << column << " in " << text.output;
  }
  const std::size_t second = text.output.rfind("TOPIC");
  EXPECT_LT(text.output.find("cli/b_fast", second), text.output.find("cli/a_slow", second)) << text.output;
}

/// The last screen a terminal program drew: what follows its last "home, clear screen".
std::string last_screen(const std::string& output) {
  const std::string clear = "\x1b[H\x1b[2J";
  const std::size_t at = output.rfind(clear);
  return at == std::string::npos ? std::string() : output.substr(at + clear.size());
}

/// The number in column `column` (0: the topic) of the row of `topic` on `screen`; negative when there is none.
double screen_figure(const std::string& screen, const std::string& topic, std::size_t column) {
  std::istringstream lines(screen);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream cells(line);
    std::vector<std::string> row;
    for (std::string cell; cells >> cell;) {
      row.push_back(cell);
    }
    if (row.size() > column && row[0] == topic) {
      try {
        return std::stod(row[column]);
      } catch (const std::exception&) {
        return -1;  // "-": not measured yet
      }
    }
  }
  return -1;
}

TEST_F(AxonGraphCommands, MonitorOnATerminalRedrawsOneScreenInPlaceAndCtrlCRestoresTheTerminal) {
  children.push_back(draining_child());
  ASSERT_TRUE(children[0].wait_for_line("READY", 20s)) << children[0].output();
  children.push_back(ticking_child());
  ASSERT_TRUE(children[1].wait_for_line("READY", 20s)) << children[1].output();

  test::PtyChild monitor = test::PtyChild::spawn(
      {kAxon, "--domain", std::to_string(test_domain()), "monitor", "--interval", "0.3"}, 160, 30);
  // A screen whose cli/ticks row has a rate (the second look on).
  ASSERT_TRUE(monitor.read_until(
      [](const std::string& out) { return screen_figure(last_screen(out), "cli/ticks", 3) >= 0; }, 20s))
      << monitor.output();
  EXPECT_EQ(monitor.output().find("\x1b[?1049h"), 0U) << "the alternate screen first";
  const std::string screen = last_screen(monitor.output());
  EXPECT_NE(screen.find("axon monitor - domain " + std::to_string(test_domain())), std::string::npos) << screen;
  EXPECT_NE(screen.find("every 0.3 s - sorted by name"), std::string::npos) << screen;
  EXPECT_NE(screen.find("TOPIC"), std::string::npos) << screen;
  // About 200 Hz; wide bounds: the machine is shared and a sleep may run late.
  const double rate = screen_figure(screen, "cli/ticks", 3);
  EXPECT_GT(rate, 60.0) << screen;
  EXPECT_LT(rate, 600.0) << screen;
  EXPECT_EQ(monitor.output().find("t="), std::string::npos) << "no pipe tables on a terminal";

  // A key changes the order at once.
  monitor.type("r");
  EXPECT_TRUE(monitor.read_until(
      [](const std::string& out) { return last_screen(out).find("sorted by rate") != std::string::npos; }, 10s))
      << monitor.output();

  monitor.type("\x03");  // Ctrl-C: the terminal sends SIGINT
  EXPECT_EQ(monitor.wait(10s), 0) << monitor.output();
  const std::string& out = monitor.output();
  const std::size_t restored = out.rfind("\x1b[?1049l");
  ASSERT_NE(restored, std::string::npos) << "the screen from before: " << out;
  EXPECT_GT(restored, out.rfind("\x1b[H\x1b[2J")) << "after the last screen";
  EXPECT_NE(out.find("\x1b[?25h", out.rfind("\x1b[H\x1b[2J")), std::string::npos) << "the cursor shown again";
}

TEST_F(AxonGraphCommands, DelayShowsEachSubscribersLatencyFromItsNodesLiveStatistics) {
  children.push_back(draining_child());
  ASSERT_TRUE(children[0].wait_for_line("READY", 20s)) << children[0].output();
  children.push_back(ticking_child());
  ASSERT_TRUE(children[1].wait_for_line("READY", 20s)) << children[1].output();
  std::this_thread::sleep_for(1500ms);  // some takes measured

  const test::CommandOutput run = axon({"topic", "delay", "cli/ticks", "--count", "2", "--interval", "0.2", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node rounds = YAML::Load(run.output)["rounds"];
  ASSERT_EQ(rounds.size(), 2U) << run.output;
  const YAML::Node subscribers = rounds[1]["subscribers"];
  ASSERT_EQ(subscribers.size(), 1U) << run.output;
  const YAML::Node s = subscribers[0];
  EXPECT_EQ(s["node"].as<std::string>(), "cli_drain");
  EXPECT_EQ(s["pid"].as<pid_t>(), children[0].pid());
  const auto count = s["count"].as<std::uint64_t>();
  EXPECT_GT(count, 0U) << run.output;
  EXPECT_LE(count, s["taken"].as<std::uint64_t>()) << run.output;
  EXPECT_GT(s["p50_ns"].as<std::uint64_t>(), 0U);
  EXPECT_LE(s["p50_ns"].as<std::uint64_t>(), s["p99_ns"].as<std::uint64_t>());
  EXPECT_LE(s["p99_ns"].as<std::uint64_t>(), s["max_ns"].as<std::uint64_t>());
  EXPECT_EQ(rounds[1]["problems"].size(), 0U) << run.output;

  const test::CommandOutput text = axon({"topic", "delay", "cli/nothing", "--count", "1"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.output.find("no subscriber of it on this host"), std::string::npos) << text.output;
}

TEST_F(AxonGraphCommands, ADamagedRegistryIsAnErrorThatNamesTheFile) {
  const std::string path = "/dev/shm/axon_d" + std::to_string(test_domain()) + "_registry";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    const std::string junk(4096, 'x');
    std::fwrite(junk.data(), 1, junk.size(), f);
    std::fclose(f);
  }
  const test::CommandOutput run = axon({"topic", "list"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.output.find(path), std::string::npos) << run.output;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace axon::tools
