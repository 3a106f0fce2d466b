// Node::create with a deployment config: the node finds its entry, takes its
// pool and topic QoS from the file, accepts peers on other hosts (UDP) and
// refuses what this build cannot carry (RDMA).
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "src/base/log.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/log_capture.hpp"

namespace axon {
namespace {

struct Reading {
  std::uint64_t value = 0;
};

class NodeConfigTest : public ::testing::Test {
 protected:
  void TearDown() override {
    ::unsetenv("AXON_CONFIG");  // NOLINT(concurrency-mt-unsafe): single-threaded test
    std::filesystem::remove_all(dir);
    EXPECT_TRUE(test::domain_files(domain).empty()) << "files left in /dev/shm";
  }

  /// Writes `text` to a file of this test and returns its path.
  std::string write_config(const std::string& text) {
    std::filesystem::create_directories(dir);
    std::string path = dir + "/deployment.yaml";
    std::ofstream(path) << text;
    return path;
  }

  NodeOptions options_with(const std::string& text) {
    NodeOptions options;
    options.domain_id = domain;
    options.config_path = write_config(text);
    return options;
  }

  std::uint32_t domain = test::unique_domain();
  std::string dir = ::testing::TempDir() + "axon_config_" + std::to_string(::getpid()) + "_" + std::to_string(domain);
};

bool contains(const std::vector<std::string>& lines, const std::string& piece) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& line) { return line.find(piece) != std::string::npos; });
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) {
    text += line + "\n";
  }
  return text;
}

constexpr const char* kSmallPool =
    "nodes:\n"
    "  - name: sensor\n"
    "    pool:\n"
    "      chunk_classes:\n"
    "        - {payload_bytes: 512, count: 3}\n"
    "        - {payload_bytes: 8 KiB, count: 2}\n"
    "    executor: {cpu_affinity: [0], sched_fifo_priority: 10}\n";

TEST_F(NodeConfigTest, ANodeTakesItsPoolFromItsEntry) {
  auto sut = Node::create("sensor", options_with(kSmallPool));

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  const auto stats = (*sut)->pool_stats();
  ASSERT_EQ(stats.size(), 2U);
  EXPECT_EQ(stats[0].payload_bytes, 512U);
  EXPECT_EQ(stats[0].total_chunks, 3U);
  EXPECT_EQ(stats[1].payload_bytes, 8192U);
  EXPECT_EQ(stats[1].total_chunks, 2U);
  EXPECT_EQ((*sut)->executor_thread_options().cpu_affinity, std::vector<int>{0});
  EXPECT_EQ((*sut)->executor_thread_options().sched_fifo_priority, 10);
}

TEST_F(NodeConfigTest, ChunkClassesGivenInCodeWinOverTheFile) {
  NodeOptions options = options_with(kSmallPool);
  options.chunk_classes = {{.payload_bytes = 1024, .count = 4}};

  auto sut = Node::create("sensor", options);

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  ASSERT_EQ((*sut)->pool_stats().size(), 1U);
  EXPECT_EQ((*sut)->pool_stats()[0].payload_bytes, 1024U);
}

TEST_F(NodeConfigTest, ANodeSizesItsConnectionTableFromItsEntry) {
  const NodeOptions options = options_with(
      "nodes:\n"
      "  - name: sensor\n"
      "    pool: {connections: 1, queue_slots: 64}\n"
      "  - name: reader\n");
  auto sensor = Node::create("sensor", options);
  auto reader = Node::create("reader", options);
  ASSERT_TRUE(sensor.ok() && reader.ok());
  auto pub = (*sensor)->advertise<Reading>("readings");
  ASSERT_TRUE(pub.ok());
  auto first = (*reader)->subscribe<Reading>("readings");
  ASSERT_TRUE(first.ok()) << first.error().message();

  auto second = (*reader)->subscribe<Reading>("readings");

  ASSERT_FALSE(second.ok()) << "pool.connections: 1 holds one subscriber";
  EXPECT_NE(second.error().message().find("raise pool.connections of node 'sensor'"), std::string::npos)
      << second.error().message();
}

TEST_F(NodeConfigTest, ANodeSizesItsPublisherBlocksFromItsEntry) {
  const NodeOptions options = options_with(
      "nodes:\n"
      "  - name: sensor\n"
      "    pool: {publishers: 3, connections: 4, queue_slots: 16}\n");
  auto sensor = Node::create("sensor", options);
  ASSERT_TRUE(sensor.ok()) << sensor.error().message();
  std::vector<std::shared_ptr<Publisher<Reading>>> publishers;
  for (int t = 0; t < 3; ++t) {
    auto pub = (*sensor)->advertise<Reading>("readings" + std::to_string(t));
    ASSERT_TRUE(pub.ok()) << pub.error().message();
    publishers.push_back(std::move(*pub));
  }

  auto fourth = (*sensor)->advertise<Reading>("readings3");

  ASSERT_FALSE(fourth.ok()) << "pool.publishers: 3 holds three publishers";
  EXPECT_NE(fourth.error().message().find("raise pool.publishers of node 'sensor'"), std::string::npos)
      << fourth.error().message();
}

TEST_F(NodeConfigTest, FindsTheFileThroughAxonConfig) {
  const std::string path = write_config(kSmallPool);
  ::setenv("AXON_CONFIG", path.c_str(), 1);  // NOLINT(concurrency-mt-unsafe): single-threaded test
  NodeOptions options;
  options.domain_id = domain;

  auto sut = Node::create("sensor", options);

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  ASSERT_NE((*sut)->deployment(), nullptr);
  EXPECT_EQ((*sut)->deployment()->file, path);
  EXPECT_EQ((*sut)->pool_stats()[0].payload_bytes, 512U);
}

TEST_F(NodeConfigTest, ANodeNotInTheFileRunsWithDefaultsOnItsOnlyHost) {
  auto sut = Node::create("other", options_with("hosts: [{name: robot}]\n"));

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ((*sut)->host(), "robot");
  EXPECT_EQ((*sut)->pool_stats().size(), default_chunk_classes().size());
}

TEST_F(NodeConfigTest, TakesTheDomainFromTheFileWhenNeitherCodeNorEnvironmentSetIt) {
  const char* env = std::getenv("AXON_DOMAIN");  // NOLINT(concurrency-mt-unsafe): single-threaded test
  if (env != nullptr && *env != '\0') {
    GTEST_SKIP() << "AXON_DOMAIN is set; it would take precedence";
  }
  NodeOptions options = options_with("domain: " + std::to_string(domain) + "\n");
  options.domain_id.reset();

  auto sut = Node::create("sensor", options);

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ((*sut)->domain_id(), domain);
}

TEST_F(NodeConfigTest, TopicQosFromTheFileAppliesWhenTheCodePassesTheDefault) {
  auto sut = Node::create("sensor", options_with("topics:\n  - name: cfg/latest\n    overflow: latest_only\n"));
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  auto from_file = (*sut)->subscribe<Reading>("cfg/latest");
  auto from_code = (*sut)->subscribe<Reading>("cfg/latest", {.depth = 8});
  auto pub = (*sut)->advertise<Reading>("cfg/latest");
  ASSERT_TRUE(from_file.ok() && from_code.ok() && pub.ok());

  for (std::uint64_t i = 1; i <= 3; ++i) {
    ASSERT_TRUE(pub->publish(Reading{.value = i}).ok());
  }

  auto latest = from_file->take();
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->value, 3U) << "latest_only from the file keeps only the freshest";
  EXPECT_TRUE(from_file->take().empty());
  for (std::uint64_t i = 1; i <= 3; ++i) {
    auto sample = from_code->take();
    ASSERT_TRUE(sample.ok()) << "explicit QoS in code keeps depth 8";
    EXPECT_EQ(sample->value, i);
  }
  EXPECT_EQ((*sut)->transport_for("cfg/latest"), TransportKind::kShm);
  EXPECT_EQ((*sut)->transport_for("not/in/the/file"), TransportKind::kShm);
}

TEST_F(NodeConfigTest, PublisherQosFromTheFileKeepsHistoryForLateJoiners) {
  auto sut = Node::create(
      "sensor", options_with("topics:\n  - {name: cfg/state, durability: transient_local, durability_depth: 2}\n"));
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  auto pub = (*sut)->advertise<Reading>("cfg/state");
  ASSERT_TRUE(pub.ok());
  for (std::uint64_t i = 1; i <= 3; ++i) {
    ASSERT_TRUE(pub->publish(Reading{.value = i}).ok());
  }

  auto late = (*sut)->subscribe<Reading>("cfg/state", {.depth = 8});
  ASSERT_TRUE(late.ok());

  std::vector<std::uint64_t> got;
  EXPECT_TRUE(test::eventually(
      [&] {
        while (auto sample = late->take()) {
          got.push_back(sample->value);
        }
        return got.size() >= 2;
      },
      std::chrono::seconds(5)));
  EXPECT_EQ(got, (std::vector<std::uint64_t>{2, 3}));
}

TEST_F(NodeConfigTest, QosEqualToTheDefaultsPassedExplicitlyIsUsedAsItIs) {
  // The file makes the topic a mailbox (depth 1) and keeps history for late
  // joiners; code that names the default QoS explicitly gets the defaults.
  auto sut = Node::create("sensor", options_with("topics:\n  - {name: cfg/explicit, overflow: latest_only, durability: "
                                                 "transient_local, durability_depth: 2}\n"));
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  auto pub = (*sut)->advertise<Reading>("cfg/explicit", PublisherQos{});
  auto from_code = (*sut)->subscribe<Reading>("cfg/explicit", SubscriberQos{});
  ASSERT_TRUE(pub.ok() && from_code.ok());

  for (std::uint64_t i = 1; i <= 3; ++i) {
    ASSERT_TRUE(pub->publish(Reading{.value = i}).ok());
  }
  auto late = (*sut)->subscribe<Reading>("cfg/explicit", SubscriberQos{});
  ASSERT_TRUE(late.ok());

  for (std::uint64_t i = 1; i <= 3; ++i) {
    auto sample = from_code->take();
    ASSERT_TRUE(sample.ok()) << "the default depth (not the file's latest_only) keeps message " << i;
    EXPECT_EQ(sample->value, i);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a late joiner would be served by now
  EXPECT_FALSE(late->take().ok()) << "the default durability (volatile, not the file's) gives late joiners nothing";
}

TEST_F(NodeConfigTest, RefusesAnInvalidFileWithItsLine) {
  auto sut = Node::create("sensor", options_with("topics:\n  - name: a\n    depth: 0\n"));

  ASSERT_FALSE(sut.ok());
  EXPECT_NE(sut.error().message().find("deployment.yaml:3:12: topic 'a' depth must be a whole number from 1 to 256"),
            std::string_view::npos)
      << sut.error().message();
}

TEST_F(NodeConfigTest, AcceptsAUdpTopic) {
  auto sut = Node::create("sensor", options_with("topics:\n  - {name: a}\n  - {name: far, transport: udp}\n"));

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ((*sut)->transport_for("a"), TransportKind::kShm) << "no other host: shared memory";
}

TEST_F(NodeConfigTest, AnRdmaTopicIsAcceptedAndTheNodeStartsOnlyWithItsHostsDevice) {
  // The config is valid (every host names an rdma_device); the node's start
  // registers its pool with mlx5_0, which this machine does not have.
  auto sut = Node::create("sensor", options_with("hosts: [{name: h, rdma_device: mlx5_0}]\n"
                                                 "topics:\n  - {name: a}\n  - {name: far, transport: rdma}\n"));

  ASSERT_FALSE(sut.ok());
  const std::string message(sut.error().message());
  EXPECT_EQ(message.find("not in this build"), std::string::npos) << message;
  EXPECT_NE(message.find("deployment.yaml:1:9: host 'h': "), std::string::npos)
      << "names the host entry whose device is missing: " << message;
}

/// Two hosts on this machine's loopback, so that a node can bind its host's
/// address; static peers (loopback has no multicast by default) on a port of
/// this test's own. `b_extra`: more keys of host b, the other host of node
/// sensor (its own host, a, names no rdma_device: its start registers nothing).
std::string two_loopback_hosts(const std::string& b_extra, std::uint32_t domain) {
  return "hosts:\n  - {name: a, address: 127.0.0.1}\n  - {name: b, address: 127.0.0.2" + b_extra +
         "}\n"
         "nodes:\n  - {name: sensor, host: a}\n  - {name: display, host: b}\n"
         "udp:\n  discovery: {static_peers: [a, b], port: " +
         std::to_string(20'000 + domain % 40'000) + "}\n";
}

TEST_F(NodeConfigTest, AcceptsPeerNodesOnAnotherHost) {
  auto sut =
      Node::create("sensor", options_with(two_loopback_hosts("", domain) +
                                          "topics:\n  - {name: cfg/auto}\n  - {name: cfg/far, transport: udp}\n"));

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ((*sut)->host(), "a");
}

/// Whether this machine has RDMA devices (the Soft-RoCE guest; the CI host has none).
bool machine_has_rdma_devices() {
  std::error_code ignored;
  const std::filesystem::path dir("/sys/class/infiniband");
  return std::filesystem::is_directory(dir, ignored) &&
         std::filesystem::directory_iterator(dir, ignored) != std::filesystem::directory_iterator();
}

// The node's own host names no device (its start registers nothing), the other host does: auto is still UDP.
TEST_F(NodeConfigTest, AcceptsAutoToAHostWithAnRdmaDeviceAndRunsItOverUdp) {
  auto sut = Node::create("sensor", options_with(two_loopback_hosts(", rdma_device: mlx5_0", domain) +
                                                 "topics:\n  - {name: cfg/auto, transport: auto}\n"));

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ((*sut)->transport_for("cfg/auto"), TransportKind::kUdp);
}

// On a machine without RDMA devices, a host that names one cannot start its nodes: the pool is registered at
// start-up, and there is nothing to register it with.
TEST_F(NodeConfigTest, RefusesToStartOnAHostWhoseRdmaDeviceThisMachineLacks) {
  if (machine_has_rdma_devices()) {
    GTEST_SKIP() << "this machine has RDMA devices (/sys/class/infiniband); RdmaNodeStartOnDevice covers it";
  }
  auto sut = Node::create("sensor", options_with("hosts: [{name: h, rdma_device: rxe0}]\n"));

  ASSERT_FALSE(sut.ok());
  const std::string message(sut.error().message());
#ifdef AXON_HAVE_RDMA
  EXPECT_EQ(sut.error().code(), ErrorCode::kSystem);
  EXPECT_NE(message.find("deployment.yaml:1:9: host 'h': no RDMA device found (ibv_get_device_list lists none): "
                         "load the driver of the card"),
            std::string::npos)
      << message;
#else
  EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(message.find("deployment.yaml:1:9: host 'h' names rdma_device 'rxe0', but this build has no RDMA "
                         "transport (libibverbs-dev/librdmacm-dev missing at build time)"),
            std::string::npos)
      << message;
#endif
  EXPECT_TRUE(test::domain_files(domain).empty()) << "a node that did not start left its files";
}

TEST_F(NodeConfigTest, RefusesANodeMissingFromAFileWithSeveralHosts) {
  auto sut = Node::create("sensor", options_with("hosts:\n  - {name: a, address: 10.0.0.1}\n"
                                                 "  - {name: b, address: 10.0.0.2}\n"));

  ASSERT_FALSE(sut.ok());
  EXPECT_NE(sut.error().message().find("node 'sensor' is not listed under nodes:"), std::string_view::npos)
      << sut.error().message();
}

TEST_F(NodeConfigTest, WarnsWithDidYouMeanWhenTheFileListsOtherNodesButNotThisOne) {
  const test::LogCapture log{spdlog::level::warn};
  NodeOptions options = options_with("nodes:\n  - name: perception\n  - name: planner\n");

  auto sut = Node::create("planer", options);

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  const auto warnings = (*sut)->config_warnings();
  ASSERT_EQ(warnings.size(), 1U) << joined(warnings);
  EXPECT_EQ(warnings[0].rfind(options.config_path + ":3:5: node 'planer' is not listed under nodes: (did you mean "
                                                    "'planner'?)",
                              0),
            0U)
      << warnings[0];
  EXPECT_NE(warnings[0].find("strict: true"), std::string::npos) << "says how to make it an error: " << warnings[0];
  EXPECT_NE(log.text().find("node 'planer' is not listed"), std::string::npos) << "logged: " << log.text();
}

TEST_F(NodeConfigTest, ANodeListedOrAFileWithoutNodesGivesNoWarning) {
  auto listed = Node::create("sensor", options_with(kSmallPool));
  auto no_nodes = Node::create("other", options_with("topics: [{name: t}]\n"));

  ASSERT_TRUE(listed.ok() && no_nodes.ok());
  EXPECT_TRUE((*listed)->config_warnings().empty()) << joined((*listed)->config_warnings());
  EXPECT_TRUE((*no_nodes)->config_warnings().empty()) << joined((*no_nodes)->config_warnings());
}

TEST_F(NodeConfigTest, StrictModeRefusesANodeTheFileDoesNotList) {
  auto sut = Node::create("planer", options_with("strict: true\nnodes:\n  - name: planner\n"));

  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
  const std::string message(sut.error().message());
  EXPECT_NE(message.find("node 'planer' is not listed under nodes: (did you mean 'planner'?)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("strict: true"), std::string::npos) << message;
}

TEST_F(NodeConfigTest, StrictModeAcceptsAListedNode) {
  auto sut = Node::create("sensor", options_with(std::string("strict: true\n") + kSmallPool));

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_TRUE((*sut)->config_warnings().empty());
}

TEST_F(NodeConfigTest, WarnsOnceWhenATopicEntryLooksLikeAMisspellingOfATopicTheNodeUses) {
  NodeOptions options = options_with("topics:\n  - {name: camera/image}\n  - {name: lidar/pionts, depth: 2}\n");
  auto sut = Node::create("sensor", options);
  ASSERT_TRUE(sut.ok()) << sut.error().message();

  auto sub = (*sut)->subscribe<Reading>("camera/image");
  auto pub = (*sut)->advertise<Reading>("lidar/points");
  auto again = (*sut)->subscribe<Reading>("lidar/points");

  ASSERT_TRUE(sub.ok() && pub.ok() && again.ok());
  const auto warnings = (*sut)->config_warnings();
  ASSERT_EQ(warnings.size(), 1U) << joined(warnings);
  EXPECT_EQ(warnings[0].rfind(options.config_path + ":3:5: topic 'lidar/pionts' of the file matches no topic of "
                                                    "node 'sensor' (did you mean 'lidar/points', which it uses?)",
                              0),
            0U)
      << warnings[0];
}

TEST_F(NodeConfigTest, TheOnlyNodeOfTheFileWarnsAtItsEndAboutTopicEntriesItNeverUsed) {
  const test::LogCapture log{spdlog::level::warn};
  auto created = Node::create("sensor", options_with("nodes: [{name: sensor}]\ntopics:\n  - name: cfg/used\n"
                                                     "  - name: cfg/never\n"));
  ASSERT_TRUE(created.ok()) << created.error().message();
  std::shared_ptr<Node> sut = std::move(*created);
  {
    auto pub = sut->advertise<Reading>("cfg/used");
    ASSERT_TRUE(pub.ok());
  }
  EXPECT_TRUE(sut->config_warnings().empty()) << "nothing is known to be unused while the node runs";

  sut.reset();

  EXPECT_NE(log.text().find(":4:5: topic 'cfg/never' of the file matched no topic of node 'sensor'"), std::string::npos)
      << "logged: " << log.text();
  EXPECT_EQ(log.text().find("'cfg/used'"), std::string::npos) << "logged: " << log.text();
}

TEST_F(NodeConfigTest, ANodeAmongSeveralSaysNothingAtItsEndAboutEntriesOthersMayUse) {
  const test::LogCapture log{spdlog::level::warn};
  auto created = Node::create("sensor", options_with("nodes: [{name: sensor}, {name: viewer}]\ntopics:\n"
                                                     "  - name: cfg/used\n  - name: cfg/viewer_only\n"));
  ASSERT_TRUE(created.ok()) << created.error().message();
  std::shared_ptr<Node> sut = std::move(*created);
  {
    auto pub = sut->advertise<Reading>("cfg/used");
    ASSERT_TRUE(pub.ok());
  }

  sut.reset();

  EXPECT_EQ(log.text().find("cfg/viewer_only"), std::string::npos) << "logged: " << log.text();
}

TEST_F(NodeConfigTest, RefusesAMissingFile) {
  NodeOptions options;
  options.domain_id = domain;
  options.config_path = dir + "/absent.yaml";

  auto sut = Node::create("sensor", options);

  ASSERT_FALSE(sut.ok());
  EXPECT_NE(sut.error().message().find("absent.yaml: cannot open the deployment config"), std::string_view::npos);
}

}  // namespace
}  // namespace axon
