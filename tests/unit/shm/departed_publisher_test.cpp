// Two nodes of one process: a publisher node that publishes and goes away
// before an idle subscriber of the other node took anything. Its messages
// stay readable (issue 13, item 3; the cross-process cases are in
// tests/integration/peer_isolation_test.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/peer_domain_test.hpp"
#include "tests/support/test_messages.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::TestMessage;

TEST(DepartedPublisher, AnIdleSubscriberOfAnotherNodeGetsWhatItPublished) {
  NodeOptions options;
  options.domain_id = test::unique_domain();
  auto reader = Node::create("reader", options);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  auto sub = (*reader)->subscribe<TestMessage>("objects", {.depth = 16});
  ASSERT_TRUE(sub.ok());
  {
    auto writer = Node::create("writer", options);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    auto pub = (*writer)->advertise<TestMessage>("objects");
    ASSERT_TRUE(pub.ok());
    for (std::uint64_t seq = 1; seq <= 10; ++seq) {
      auto loan = (*pub)->loan();
      ASSERT_TRUE(loan.ok());
      test::fill(**loan, 1, seq);
      auto status = (*pub)->publish(std::move(*loan));
      ASSERT_TRUE(status.ok());
      EXPECT_EQ(status->delivered, 1U);
    }
  }  // publisher and its node are gone before the subscriber looked

  EXPECT_EQ(test::take_in_order(**sub, 10, 5s), 11U) << "every message publish() reported delivered is received";
}

}  // namespace
}  // namespace axon
