// The registry's limits exercised at their maximum (issue 15, "a domain of
// 200 nodes, 2,000 topics ... in 20 processes"): a domain whose limits.nodes
// is 200 holds 200 nodes in 20 processes, one whose limits.topics is 2000
// holds 2000 topics, one raised above the defaults 400 nodes and 4000 topics
// and publishers, and the default domain its 256 nodes and 2048 topics;
// one more of either is refused with a message naming the key that raises it.
// Nodes run with small pools and a slow liveness round: what is measured is
// the registry, not the liveness checks of issue 15's idle-cost item.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "transports/shm/shm_constants.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;

struct Tick {
  std::uint64_t n = 0;
};

class DomainAtItsLimits : public ::testing::Test {
 protected:
  // Children still running (a failed check skipped stop()) are closed the
  // same way before the files are counted; what a child that had to be
  // killed left behind is removed after it is reported, so that one failure
  // does not also fail suite.shm_dir_is_clean.
  void TearDown() override {
    stop();
    std::filesystem::remove(go_file);
    const auto left = test::domain_files(domain);
    EXPECT_TRUE(left.empty()) << "files left in /dev/shm";
    for (const auto& file : left) {
      std::filesystem::remove(file);
    }
  }

  NodeOptions small_node() const {
    NodeOptions options;
    options.domain_id = domain;
    options.domain_limits = limits;
    options.chunk_classes = {{.payload_bytes = 64, .count = 4}};
    options.liveness_period_ms = 60'000;
    options.pool_connections = 4;
    options.pool_queue_slots = 4;
    return options;
  }

  /// A child that creates `nodes` nodes (each advertising `topics_per_node`
  /// topics of its own), says READY, and closes them once the parent
  /// created go_file (at most kChildLifetime).
  ChildProcess spawn_nodes(int process, int nodes, int topics_per_node) {
    return ChildProcess::fork_and_run([=, this] {
      std::vector<std::shared_ptr<Node>> created;
      std::vector<std::shared_ptr<Publisher<Tick>>> publishers;
      for (int n = 0; n < nodes; ++n) {
        auto node = Node::create("p" + std::to_string(process) + "n" + std::to_string(n), small_node());
        if (!node) {
          std::printf("ERROR %s\n", std::string(node.error().message()).c_str());
          std::fflush(stdout);
          return 1;
        }
        for (int t = 0; t < topics_per_node; ++t) {
          auto pub = (*node)->advertise<Tick>("p" + std::to_string(process) + "/n" + std::to_string(n) + "/t" +
                                              std::to_string(t));
          if (!pub) {
            std::printf("ERROR %s\n", std::string(pub.error().message()).c_str());
            std::fflush(stdout);
            return 2;
          }
          publishers.push_back(std::move(*pub));
        }
        created.push_back(std::move(*node));
      }
      std::printf("READY\n");
      std::fflush(stdout);
      const auto deadline = std::chrono::steady_clock::now() + kChildLifetime;
      while (!std::filesystem::exists(go_file) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(10ms);
      }
      return 0;
    });
  }

  /// Spawns `processes` children of `nodes` nodes each and waits until all
  /// are up. One deadline for all: under TSan, with other tests on CI's two
  /// cores, 400 nodes took more than 20 s to come up.
  void start(int processes, int nodes, int topics_per_node) {
    for (int p = 0; p < processes; ++p) {
      children.push_back(spawn_nodes(p, nodes, topics_per_node));
    }
    const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
    for (auto& child : children) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      ASSERT_TRUE(child.wait_for_line("READY", std::max(left, std::chrono::milliseconds{1}))) << child.output();
    }
  }

  /// Lets every child close its nodes and exit (once; TearDown calls it too).
  void stop() {
    if (children.empty()) {
      return;
    }
    std::ofstream(go_file) << "go\n";
    for (auto& child : children) {
      EXPECT_EQ(child.wait(60s), 0) << child.output();
    }
    children.clear();
  }

  static constexpr auto kStartTimeout = std::chrono::seconds{120};
  static constexpr auto kChildLifetime = std::chrono::seconds{240};

  std::uint32_t domain = test::unique_domain();
  /// What every node of the test asks for (unset: the defaults).
  std::optional<DomainLimits> limits;
  std::string go_file =
      ::testing::TempDir() + "axon_limits_go_" + std::to_string(::getpid()) + "_" + std::to_string(domain);
  std::vector<ChildProcess> children;
};

/// The message of a table that is full, naming the key that raises it.
void expect_full(const Error& error, std::uint32_t count, const std::string& what, const std::string& key) {
  EXPECT_EQ(error.code(), ErrorCode::kLimitReached);
  const std::string message(error.message());
  EXPECT_NE(message.find("already has " + std::to_string(count) + " " + what), std::string::npos) << message;
  EXPECT_NE(message.find("raise limits." + key), std::string::npos) << message;
}

TEST_F(DomainAtItsLimits, HoldsTwoHundredNodesInTwentyProcessesAtLimitsNodes200AndRefusesOneMore) {
  limits = DomainLimits{.nodes = 200};
  ASSERT_NO_FATAL_FAILURE(start(20, 10, 0));

  auto extra = Node::create("extra", small_node());

  ASSERT_FALSE(extra.ok()) << "a node past limits.nodes";
  expect_full(extra.error(), 200, "participants", "nodes");
  stop();
}

TEST_F(DomainAtItsLimits, HoldsTwoThousandTopicsAtLimitsTopics2000AndRefusesOneMore) {
  limits = DomainLimits{.topics = 2000};
  ASSERT_NO_FATAL_FAILURE(start(20, 4, 25));
  auto created = Node::create("extra", small_node());
  ASSERT_TRUE(created.ok()) << created.error().message();
  std::shared_ptr<Node> node = std::move(*created);

  auto extra = node->advertise<Tick>("one/too/many");

  ASSERT_FALSE(extra.ok()) << "a topic past limits.topics";
  expect_full(extra.error(), 2000, "topics", "topics");
  node.reset();
  stop();
}

TEST_F(DomainAtItsLimits, HoldsRaisedLimitsOf400NodesAnd4000TopicsAndPublishersInTwentyProcesses) {
  // Above the defaults (256 nodes, 2048 topics, 4096 publishers), each table full.
  limits = DomainLimits{.nodes = 400, .topics = 4000, .publishers = 4000};
  ASSERT_NO_FATAL_FAILURE(start(20, 20, 10));

  auto extra = Node::create("extra", small_node());

  ASSERT_FALSE(extra.ok()) << "a node past limits.nodes";
  expect_full(extra.error(), 400, "participants", "nodes");
  stop();
}

TEST_F(DomainAtItsLimits, HoldsItsMaximumOfNodesInManyProcessesAndRefusesOneMore) {
  constexpr int kProcesses = 16;
  static_assert(shm::kDefaultParticipants % kProcesses == 0);
  ASSERT_NO_FATAL_FAILURE(start(kProcesses, shm::kDefaultParticipants / kProcesses, 0));

  auto extra = Node::create("extra", small_node());

  ASSERT_FALSE(extra.ok()) << "a node past the default limits.nodes";
  expect_full(extra.error(), shm::kDefaultParticipants, "participants", "nodes");
  stop();
}

TEST_F(DomainAtItsLimits, HoldsItsMaximumOfTopicsAndRefusesOneMore) {
  // Every node advertises 32 topics (its default pool.publishers), 8 nodes a process.
  constexpr int kTopicsPerNode = 32;
  constexpr int kNodesPerProcess = 8;
  constexpr int kProcesses = shm::kDefaultTopics / (kTopicsPerNode * kNodesPerProcess);
  static_assert(kProcesses * kTopicsPerNode * kNodesPerProcess == shm::kDefaultTopics);
  ASSERT_NO_FATAL_FAILURE(start(kProcesses, kNodesPerProcess, kTopicsPerNode));
  auto created = Node::create("extra", small_node());
  ASSERT_TRUE(created.ok()) << created.error().message();
  std::shared_ptr<Node> node = std::move(*created);

  auto extra = node->advertise<Tick>("one/too/many");

  ASSERT_FALSE(extra.ok()) << "a topic past the default limits.topics";
  expect_full(extra.error(), shm::kDefaultTopics, "topics", "topics");
  node.reset();
  stop();
}

}  // namespace
}  // namespace axon
