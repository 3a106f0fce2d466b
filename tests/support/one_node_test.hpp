// A fixture for tests of one process: a node in a domain of the test's own,
// and a check at the end that the node left no files in /dev/shm.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "axon/node.hpp"
#include "axon/options.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/peer_domain_test.hpp"

namespace axon::test {

class OneNodeTest : public ::testing::Test {
 protected:
  /// Node `name` whose pool has `classes`.
  OneNodeTest(const std::string& name, std::vector<ChunkClassConfig> classes)
      : node(*Node::create(name, pool_options(domain, std::move(classes)))) {}

  void TearDown() override {
    node.reset();
    EXPECT_TRUE(domain_files(domain).empty()) << "files left in /dev/shm";
  }

  std::uint32_t domain = unique_domain();
  std::shared_ptr<Node> node;
};

}  // namespace axon::test
