// What the tests that run axon_test_peer processes share: a domain of the
// test's own, peers spawned into it, nodes of this process in it and their
// options, the free chunks of a node's pool (what a test counts to see every
// chunk back), and taking numbered TestMessages in order.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "axon/node.hpp"
#include "axon/options.hpp"
#include "axon/subscriber.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/test_messages.hpp"

namespace axon::test {

/// Free chunks of every class of `node`'s pool.
inline std::uint32_t total_free(const Node& node) {
  std::uint32_t free = 0;
  for (const auto& c : node.pool_stats()) {
    free += c.free_chunks;
  }
  return free;
}

/// Takes TestMessages from `sub` until message `count` came or `timeout`
/// passed, expecting each intact and numbered 1, 2, ... in order: the number
/// of the next one expected (count + 1 once all came).
inline std::uint64_t take_in_order(Subscriber<TestMessage>& sub, std::uint64_t count,
                                   std::chrono::milliseconds timeout) {
  std::uint64_t expected = 1;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (expected <= count && std::chrono::steady_clock::now() < deadline) {
    auto sample = sub.take();
    if (!sample) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    EXPECT_TRUE(intact(**sample));
    EXPECT_EQ(sample->sequence, expected++);
  }
  return expected;
}

/// Options of a node in `domain` whose pool has `classes`.
inline NodeOptions pool_options(std::uint32_t domain, std::vector<ChunkClassConfig> classes) {
  NodeOptions options;
  options.domain_id = domain;
  options.chunk_classes = std::move(classes);
  return options;
}

/// A fixture whose test has a domain of its own (`domain`).
class PeerDomainTest : public ::testing::Test {
 protected:
  /// An axon_test_peer running `command` on `topic` in the test's domain,
  /// with `args` (key=value) after those.
  ChildProcess peer(const std::string& command, std::vector<std::string> args,
                    const std::string& topic = "objects") const {
    std::vector<std::string> argv{peer_path(), command, "domain=" + std::to_string(domain), "topic=" + topic};
    argv.insert(argv.end(), std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
    return ChildProcess::spawn(argv);
  }

  /// A node of this process in the test's domain (which `options` need not
  /// name); nullptr, and the test failed, when it could not be created.
  std::shared_ptr<Node> make_node(const std::string& name, NodeOptions options = {}) const {
    options.domain_id = domain;
    auto node = Node::create(name, options);
    EXPECT_TRUE(node.ok()) << node.error().message();
    return node.ok() ? *node : nullptr;
  }

  std::uint32_t domain = unique_domain();
};

}  // namespace axon::test
