// WaitSet in one process: timeouts, readiness, limits.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/one_node_test.hpp"
#include "tests/unit/scheduler/scheduler_test_util.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::publish_tick;
using test::Tick;

class WaitSetTest : public test::OneNodeTest {
 protected:
  WaitSetTest() : OneNodeTest("wait_set_test", test::scheduler_node_options(0).chunk_classes) {}
};

TEST_F(WaitSetTest, TimesOutWhenNothingArrives) {
  auto sub = *node->subscribe<Tick>("ticks");
  WaitSet sut;
  ASSERT_TRUE(sut.attach(sub).ok());

  auto outcome = sut.wait(20ms);

  ASSERT_TRUE(outcome.ok()) << "a timeout is an outcome, not an error";
  EXPECT_TRUE(outcome->timed_out());
  EXPECT_FALSE(sut.is_ready(0));
}

// The timeout counts from the wait's first look that finds nothing (no clock is read before it): never shorter
// than asked, whichever way the wait idles.
TEST_F(WaitSetTest, ATimeoutIsNeverCutShortWhicheverTheStrategy) {
  auto sub = *node->subscribe<Tick>("ticks");
  for (const WaitStrategy strategy :
       {WaitStrategy::busy_spin(), WaitStrategy::spin_yield_sleep(1'000, 1'000), WaitStrategy::blocking()}) {
    WaitSet sut(strategy);
    ASSERT_TRUE(sut.attach(sub).ok());
    const auto start = std::chrono::steady_clock::now();

    auto outcome = sut.wait(30ms);

    const auto waited = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(outcome.ok());
    EXPECT_TRUE(outcome->timed_out());
    EXPECT_GE(waited, 30ms) << "strategy " << static_cast<int>(strategy.kind());
  }
}

TEST_F(WaitSetTest, ReportsWhichSubscriberIsReady) {
  auto pub_b = *node->advertise<Tick>("b");
  auto sub_a = *node->subscribe<Tick>("a");
  auto sub_b = *node->subscribe<Tick>("b");
  WaitSet sut(WaitStrategy::spin_yield_sleep(1'000, 1'000));
  auto a = sut.attach(sub_a);
  auto b = sut.attach(sub_b);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, 0U);
  EXPECT_EQ(*b, 1U);
  (void)sub_b->publisher_count();  // connect
  ASSERT_TRUE(publish_tick(*pub_b, 7));

  auto outcome = sut.wait(5s);

  ASSERT_TRUE(outcome.ok());
  ASSERT_FALSE(outcome->timed_out());
  ASSERT_EQ(outcome->ready.size(), 1U);
  EXPECT_EQ(outcome->ready[0], *b);
  EXPECT_TRUE(sut.is_ready(*b));
  EXPECT_FALSE(sut.is_ready(*a));
  auto sample = sub_b->take();
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(sample->sequence, 7U);
}

TEST_F(WaitSetTest, BlockingWaitWakesWhenAnotherThreadPublishes) {
  auto pub = *node->advertise<Tick>("ticks");
  auto sub = *node->subscribe<Tick>("ticks");
  (void)sub->publisher_count();
  WaitSet sut(WaitStrategy::blocking());
  ASSERT_TRUE(sut.attach(sub).ok());
  std::thread publisher([&] {
    std::this_thread::sleep_for(20ms);
    EXPECT_TRUE(publish_tick(*pub, 1));
  });

  auto outcome = sut.wait(10s);
  publisher.join();

  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->timed_out());
}

TEST_F(WaitSetTest, RefusesMoreThan128Subscribers) {
  WaitSet sut;
  std::vector<std::shared_ptr<Subscriber<Tick>>> subs;
  for (std::size_t i = 0; i < WaitSet::kMaxAttached; ++i) {
    subs.push_back(*node->subscribe<Tick>("many"));
    ASSERT_TRUE(sut.attach(subs.back()).ok()) << i;
  }
  auto extra = *node->subscribe<Tick>("many");

  auto refused = sut.attach(extra);

  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kLimitReached);
  EXPECT_NE(refused.error().message().find("128"), std::string_view::npos);
}

TEST_F(WaitSetTest, RefusesToWaitOnNothingAndToAttachTwice) {
  WaitSet sut;
  EXPECT_FALSE(sut.wait(1ms).ok());
  auto sub = *node->subscribe<Tick>("ticks");
  ASSERT_TRUE(sut.attach(sub).ok());
  EXPECT_FALSE(sut.attach(sub).ok());
  EXPECT_FALSE(sut.attach(std::shared_ptr<Subscriber<Tick>>()).ok());
}

}  // namespace
}  // namespace axon
