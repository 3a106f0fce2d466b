// Publishers per subscriber (issue 15): a domain's limits.publishers_per_topic
// (default 64, 1..1024) sizes each subscriber's link table. A domain raised
// to 80 delivers to one subscriber from 80 publishers in 8 processes and
// refuses the 81st; the default domain refuses the 65th. Each refusal names
// the key that raises it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;

struct Tick {
  std::uint64_t n = 0;
};

constexpr const char* kTopic = "many/publishers";

class PublishersPerTopic : public ::testing::Test {
 protected:
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
    options.chunk_classes = {{.payload_bytes = 64, .count = 8}};
    options.liveness_period_ms = 60'000;
    options.pool_connections = 4;
    options.pool_queue_slots = 4;
    return options;
  }

  /// A child of `nodes` nodes, each advertising kTopic and publishing its
  /// number (process * nodes + node) every 20 ms until go_file exists.
  ChildProcess spawn_publishers(int process, int nodes) {
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
        auto pub = (*node)->advertise<Tick>(kTopic);
        if (!pub) {
          std::printf("ERROR %s\n", std::string(pub.error().message()).c_str());
          std::fflush(stdout);
          return 2;
        }
        publishers.push_back(std::move(*pub));
        created.push_back(std::move(*node));
      }
      std::printf("READY\n");
      std::fflush(stdout);
      const auto deadline = std::chrono::steady_clock::now() + kChildLifetime;
      while (!std::filesystem::exists(go_file) && std::chrono::steady_clock::now() < deadline) {
        for (std::size_t i = 0; i < publishers.size(); ++i) {
          // No room (a full pool) is an outcome; the next round sends again.
          (void)publishers[i]->publish(Tick{.n = static_cast<std::uint64_t>(process) * nodes + i});
        }
        std::this_thread::sleep_for(20ms);
      }
      return 0;
    });
  }

  void start(int processes, int nodes) {
    for (int p = 0; p < processes; ++p) {
      children.push_back(spawn_publishers(p, nodes));
    }
    const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
    for (auto& child : children) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      ASSERT_TRUE(child.wait_for_line("READY", std::max(left, std::chrono::milliseconds{1}))) << child.output();
    }
  }

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

  /// A node of the parent advertising one publisher more: refused, naming the key.
  void expect_one_more_refused(std::uint32_t publishers) {
    auto created = Node::create("extra", small_node());
    ASSERT_TRUE(created.ok()) << created.error().message();
    auto extra = (*created)->advertise<Tick>(kTopic);
    ASSERT_FALSE(extra.ok()) << "a publisher past limits.publishers_per_topic";
    EXPECT_EQ(extra.error().code(), ErrorCode::kLimitReached);
    const std::string message(extra.error().message());
    EXPECT_NE(message.find("has " + std::to_string(publishers) + " publishers"), std::string::npos) << message;
    EXPECT_NE(message.find("raise limits.publishers_per_topic"), std::string::npos) << message;
  }

  static constexpr auto kStartTimeout = std::chrono::seconds{120};
  static constexpr auto kReceiveTimeout = std::chrono::seconds{120};
  static constexpr auto kChildLifetime = std::chrono::seconds{240};

  std::uint32_t domain = test::unique_domain();
  std::optional<DomainLimits> limits;
  std::string go_file =
      ::testing::TempDir() + "axon_links_go_" + std::to_string(::getpid()) + "_" + std::to_string(domain);
  std::vector<ChildProcess> children;
};

TEST_F(PublishersPerTopic, OneSubscriberReceivesFromEightyPublishersAtLimit80AndOneMoreIsRefused) {
  limits = DomainLimits{.publishers_per_topic = 80};
  // The children first: fork() from a process whose node runs threads is
  // refused by TSan, and a late subscriber connects to every publisher.
  ASSERT_NO_FATAL_FAILURE(start(8, 10));
  auto created = Node::create("subscriber", small_node());
  ASSERT_TRUE(created.ok()) << created.error().message();
  std::shared_ptr<Node> node = std::move(*created);
  auto subscribed = node->subscribe<Tick>(kTopic, SubscriberQos{.depth = 4});
  ASSERT_TRUE(subscribed.ok()) << subscribed.error().message();
  std::shared_ptr<Subscriber<Tick>> sub = std::move(*subscribed);

  std::set<std::uint64_t> heard;
  const auto deadline = std::chrono::steady_clock::now() + kReceiveTimeout;
  while (heard.size() < 80 && std::chrono::steady_clock::now() < deadline) {
    if (auto sample = sub->take()) {
      heard.insert((*sample)->n);
    } else {
      std::this_thread::sleep_for(1ms);
    }
  }

  EXPECT_EQ(heard.size(), 80U) << "publishers heard from";
  EXPECT_EQ(sub->publisher_count(), 80U);
  ASSERT_NO_FATAL_FAILURE(expect_one_more_refused(80));
  sub.reset();
  node.reset();
  stop();
}

TEST_F(PublishersPerTopic, TheDefaultDomainRefusesThe65thPublisherNamingTheKey) {
  ASSERT_NO_FATAL_FAILURE(start(8, 8));

  ASSERT_NO_FATAL_FAILURE(expect_one_more_refused(64));
  stop();
}

}  // namespace
}  // namespace axon
