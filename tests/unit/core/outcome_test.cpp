// Outcomes are not errors (issue 14): an empty take(), an exhausted loan()
// and a reliable publish() that timed out come back in the normal path of
// their results, construct no Error and allocate nothing; the status a
// publish computed is never thrown away. In the allocation-counting
// executable (tests/support/allocation_hooks.cpp).
#include <gtest/gtest.h>

#include <vector>

#include "axon/axon.hpp"
#include "tests/support/allocation_hooks.hpp"
#include "tests/support/child_process.hpp"

namespace axon {
namespace {

namespace allocations = test::allocations;

struct Reading {
  std::uint64_t value = 0;
};

class OutcomeTest : public ::testing::Test {
 protected:
  void TearDown() override {
    (void)allocations::stop();
    node.reset();
  }
  std::shared_ptr<Node> make_node(std::uint32_t chunks) {
    NodeOptions options;
    options.domain_id = domain;
    options.chunk_classes = {{.payload_bytes = 256, .count = chunks}};
    auto created = Node::create("outcome_test", std::move(options));
    EXPECT_TRUE(created.ok()) << created.error().message();
    return created.ok() ? *created : nullptr;
  }
  std::uint32_t domain = test::unique_domain();
  std::shared_ptr<Node> node;
};

TEST_F(OutcomeTest, TakingFromAnEmptySubscriberIsAnOutcomeThatAllocatesNothing) {
  node = make_node(16);
  auto pub = node->advertise<Reading>("readings");
  auto sut = node->subscribe<Reading>("readings");
  ASSERT_TRUE(pub.ok() && sut.ok());
  ASSERT_TRUE(pub->publish(Reading{.value = 1}).ok());
  ASSERT_TRUE(sut->take().ok());
  (void)sut->take();  // warm up: the first take of a connection may rescan

  allocations::start();
  auto taken = sut->take();
  const std::uint64_t allocated = allocations::stop();

  EXPECT_FALSE(taken.ok()) << "nothing is queued";
  EXPECT_TRUE(taken.empty());
  EXPECT_FALSE(taken.failed());
  EXPECT_EQ(taken.error().code(), ErrorCode::kOk) << "an empty queue is not an error: " << taken.error().message();
  if (allocations::kCounted) {
    EXPECT_EQ(allocated, 0U);
  }
}

TEST_F(OutcomeTest, ALoanFromAnExhaustedPoolIsBackPressureThatAllocatesNothing) {
  node = make_node(4);
  auto sut = node->advertise<Reading>("readings");
  ASSERT_TRUE(sut.ok());
  std::vector<Loan<Reading>> held;
  for (int i = 0; i < 4; ++i) {
    auto loan = sut->loan();
    ASSERT_TRUE(loan.ok()) << i;
    held.push_back(std::move(*loan));
  }
  held.reserve(held.size() + 1);

  allocations::start();
  auto refused = sut->loan();
  const std::uint64_t allocated = allocations::stop();

  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(refused.exhausted());
  EXPECT_FALSE(refused.failed());
  EXPECT_EQ(refused.error().code(), ErrorCode::kOk) << "back-pressure is not an error: " << refused.error().message();
  if (allocations::kCounted) {
    EXPECT_EQ(allocated, 0U);
  }
  EXPECT_NE(sut->explain_exhausted().find("this publisher holds 4 in loans"), std::string::npos)
      << sut->explain_exhausted();
}

TEST_F(OutcomeTest, APublishValueFromAnExhaustedPoolSendsNothingAndIsNoError) {
  node = make_node(1);
  auto sut = node->advertise<Reading>("readings");
  ASSERT_TRUE(sut.ok());
  auto held = sut->loan();
  ASSERT_TRUE(held.ok());

  auto refused = sut->publish(Reading{.value = 1});

  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(refused.exhausted());
  EXPECT_FALSE(refused.failed());
  EXPECT_EQ(refused->delivered, 0U);
}

TEST_F(OutcomeTest, AReliablePublishThatTimedOutReturnsItsStatus) {
  node = make_node(16);
  auto sut = node->advertise<Reading>("readings");
  auto reliable = node->subscribe<Reading>(
      "readings", {.depth = 1, .reliability = Reliability::kReliable, .block_timeout_ns = 5'000'000});
  auto other = node->subscribe<Reading>("readings", {.depth = 4});
  ASSERT_TRUE(sut.ok() && reliable.ok() && other.ok());
  ASSERT_TRUE(sut->publish(Reading{.value = 1}).ok());

  auto status = sut->publish(Reading{.value = 2});

  ASSERT_TRUE(status.ok()) << "a timeout is an outcome counted in the status: " << status.error().message();
  EXPECT_FALSE(status.failed());
  EXPECT_EQ(status->delivered, 1U) << "the other subscriber got it";
  EXPECT_EQ(status->timed_out, 1U);
  EXPECT_EQ(status->dropped, 1U);
  EXPECT_EQ(reliable->counters().queue.dropped_timeout, 1U);
}

TEST_F(OutcomeTest, AForeignLoanIsAFailureThatStillHasAnEmptyStatus) {
  node = make_node(16);
  auto sut = node->advertise<Reading>("readings");
  auto lender = node->advertise<Reading>("other");
  ASSERT_TRUE(sut.ok() && lender.ok());
  auto loan = lender->loan();
  ASSERT_TRUE(loan.ok());

  auto refused = sut->publish(std::move(*loan));

  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(refused.failed());
  EXPECT_FALSE(refused.exhausted());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused->delivered, 0U);
}

}  // namespace
}  // namespace axon
