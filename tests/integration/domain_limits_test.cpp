// The registry's limits exercised at their maximum (issue 15): a domain with
// kMaxParticipants nodes in many processes, and one with kMaxTopics topics;
// one more of either is refused with a message naming the limit. Nodes run
// with small pools and a slow liveness round: what is measured is the
// registry, not the /proc reads of issue 15's idle-cost item.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
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

class DomainLimits : public ::testing::Test {
 protected:
  void TearDown() override {
    std::filesystem::remove(go_file);
    EXPECT_TRUE(test::domain_files(domain).empty()) << "files left in /dev/shm";
  }

  NodeOptions small_node() const {
    NodeOptions options;
    options.domain_id = domain;
    options.chunk_classes = {{.payload_bytes = 64, .count = 4}};
    options.liveness_period_ms = 60'000;
    options.pool_connections = 4;
    options.pool_queue_slots = 4;
    return options;
  }

  /// A child that creates `nodes` nodes (each advertising `topics_per_node`
  /// topics of its own), says READY, and closes them once the parent
  /// created go_file (at most 60 s).
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
      const auto deadline = std::chrono::steady_clock::now() + 60s;
      while (!std::filesystem::exists(go_file) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(10ms);
      }
      return 0;
    });
  }

  /// Spawns `processes` children of `nodes` nodes each and waits until all are up.
  void start(int processes, int nodes, int topics_per_node) {
    for (int p = 0; p < processes; ++p) {
      children.push_back(spawn_nodes(p, nodes, topics_per_node));
    }
    for (auto& child : children) {
      ASSERT_TRUE(child.wait_for_line("READY", 20s)) << child.output();
    }
  }

  void stop() {
    std::ofstream(go_file) << "go\n";
    for (auto& child : children) {
      EXPECT_EQ(child.wait(20s), 0) << child.output();
    }
  }

  std::uint32_t domain = test::unique_domain();
  std::string go_file =
      ::testing::TempDir() + "axon_limits_go_" + std::to_string(::getpid()) + "_" + std::to_string(domain);
  std::vector<ChildProcess> children;
};

TEST_F(DomainLimits, HoldsItsMaximumOfNodesInManyProcessesAndRefusesOneMore) {
  constexpr int kProcesses = 16;
  static_assert(shm::kMaxParticipants % kProcesses == 0);
  start(kProcesses, shm::kMaxParticipants / kProcesses, 0);

  auto extra = Node::create("extra", small_node());

  ASSERT_FALSE(extra.ok()) << "a node past kMaxParticipants";
  EXPECT_EQ(extra.error().code(), ErrorCode::kLimitReached);
  EXPECT_NE(extra.error().message().find("already has " + std::to_string(shm::kMaxParticipants) + " participants"),
            std::string::npos)
      << extra.error().message();
  stop();
}

TEST_F(DomainLimits, HoldsItsMaximumOfTopicsAndRefusesOneMore) {
  // Every node advertises 32 topics (kMaxPublishersPerNode), 8 nodes a process.
  constexpr int kTopicsPerNode = 32;
  constexpr int kNodesPerProcess = 8;
  constexpr int kProcesses = shm::kMaxTopics / (kTopicsPerNode * kNodesPerProcess);
  static_assert(kProcesses * kTopicsPerNode * kNodesPerProcess == shm::kMaxTopics);
  start(kProcesses, kNodesPerProcess, kTopicsPerNode);
  auto created = Node::create("extra", small_node());
  ASSERT_TRUE(created.ok()) << created.error().message();
  std::shared_ptr<Node> node = std::move(*created);

  auto extra = node->advertise<Tick>("one/too/many");

  ASSERT_FALSE(extra.ok()) << "a topic past kMaxTopics";
  EXPECT_EQ(extra.error().code(), ErrorCode::kLimitReached);
  EXPECT_NE(extra.error().message().find("already has " + std::to_string(shm::kMaxTopics) + " topics"),
            std::string::npos)
      << extra.error().message();
  node.reset();
  stop();
}

}  // namespace
}  // namespace axon
