// The fixture of tests that need virtual hosts: skipped, with the reason and
// how to run them, where this process cannot create network namespaces.
#pragma once

#include <gtest/gtest.h>

#include "tests/support/common/netns.hpp"

namespace axon::test {

class VirtualHostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = VirtualHosts::unavailable_reason(); !why.empty()) {
      GTEST_SKIP() << "multi-host test skipped: " << why
                   << " (e.g. sudo ctest --test-dir build/release -R 'Multihost|VirtualHosts'; CI runs as root)";
    }
  }
};

}  // namespace axon::test
