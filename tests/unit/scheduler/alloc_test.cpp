// No heap allocation in the steady state of publish -> dispatch -> callback:
// operator new (and, outside sanitizer builds, malloc) are replaced by
// counting versions in this executable (tests/support/allocation_hooks.cpp).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>

#include "axon/axon.hpp"
#include "tests/support/allocation_hooks.hpp"
#include "tests/unit/scheduler/scheduler_test_util.hpp"

namespace axon {
namespace {

namespace allocations = test::allocations;

using namespace std::chrono_literals;
using test::Tick;

constexpr std::uint64_t kWarmUp = 1'000;
constexpr std::uint64_t kMeasured = 10'000;

class AllocationTest : public ::testing::Test {
 protected:
  void TearDown() override {
    (void)allocations::stop();
    node.reset();
  }
  std::uint32_t domain = test::unique_domain();
  std::shared_ptr<Node> node = *Node::create("alloc_test", test::scheduler_node_options(domain));
};

bool publish(Publisher<Tick>& pub, std::uint64_t sequence) {
  auto loan = pub.loan();
  if (!loan) {
    return false;
  }
  loan->sequence = sequence;
  return pub.publish(std::move(*loan)).ok();
}

TEST_F(AllocationTest, TheHooksCountAllocations) {
  if (!allocations::kCounted) {
    GTEST_SKIP() << "sanitizer build: allocations are counted in the plain build";
  }
  allocations::start();
  auto* volatile p = new std::uint64_t(7);  // volatile: the pair must not be elided
  delete p;
  void* volatile raw = std::malloc(16);
  std::free(raw);
  EXPECT_GE(allocations::stop(), 2U) << "a sanity check of the counting itself";
}

TEST_F(AllocationTest, SingleThreadedPublishDispatchCallbackDoesNotAllocate) {
  auto pub = *node->advertise<Tick>("ticks");
  std::uint64_t received = 0;
  std::uint64_t sum = 0;
  auto sub = *node->subscribe<Tick>("ticks", {.deadline_ns = 1'000'000'000}, [&](const Sample<Tick>& s) {
    ++received;
    sum += s->sequence;
  });
  sub->on_deadline_missed([](const DeadlineEvent&) {});
  SingleThreadedExecutor sut(ExecutorOptions{.wait_strategy = WaitStrategy::busy_spin()});
  ASSERT_TRUE(sut.add(sub).ok());
  for (std::uint64_t i = 1; i <= kWarmUp; ++i) {
    ASSERT_TRUE(publish(*pub, i));
    ASSERT_EQ(*sut.spin_some(), 1U);
  }

  allocations::start();
  std::uint64_t failures = 0;
  for (std::uint64_t i = 1; i <= kMeasured; ++i) {
    failures += publish(*pub, i) ? 0 : 1;
    auto ran = sut.spin_some();
    failures += ran.ok() && *ran == 1 ? 0 : 1;
  }
  const std::uint64_t allocated = allocations::stop();

  EXPECT_EQ(failures, 0U);
  EXPECT_EQ(received, kWarmUp + kMeasured);
  if (allocations::kCounted) {
    EXPECT_EQ(allocated, 0U) << "heap allocations in " << kMeasured << " publish -> dispatch -> callback";
  }
}

TEST_F(AllocationTest, MultiThreadedDispatchDoesNotAllocate) {
  auto pub = *node->advertise<Tick>("ticks");
  std::atomic<std::uint64_t> received{0};
  auto sub = *node->subscribe<Tick>("ticks", {.depth = 256},
                                    [&](const Sample<Tick>&) { received.fetch_add(1, std::memory_order_release); });
  MultiThreadedExecutor sut(MultiThreadedOptions{.threads = 1, .wait_strategy = WaitStrategy::blocking()});
  ASSERT_TRUE(sut.add(sub).ok());
  std::thread spinner([&] { EXPECT_TRUE(sut.spin().ok()); });
  // At most 128 messages in flight (the queue holds 256); waits sleep, so a
  // loaded machine slows the test down rather than starving the executor.
  // Bounded: gives up (and the test fails) after 60 s.
  const auto give_up = std::chrono::steady_clock::now() + 60s;
  auto publish_and_wait = [&](std::uint64_t from, std::uint64_t count) {
    for (std::uint64_t i = from; i < from + count; ++i) {
      while (i - received.load(std::memory_order_acquire) > 128 || !publish(*pub, i)) {
        if (std::chrono::steady_clock::now() > give_up) {
          return;
        }
        std::this_thread::sleep_for(50us);
      }
    }
    while (received.load(std::memory_order_acquire) < from + count - 1 && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(50us);
    }
  };
  publish_and_wait(1, kWarmUp);

  allocations::start(allocations::Scope::kAllThreads);  // the poller, the worker, the node's service thread
  publish_and_wait(kWarmUp + 1, kMeasured);
  const std::uint64_t allocated = allocations::stop();  // after acquire loads of `received`
  sut.stop();
  spinner.join();

  EXPECT_EQ(received.load(), kWarmUp + kMeasured);
  if (allocations::kCounted) {
    EXPECT_EQ(allocated, 0U) << "heap allocations in " << kMeasured << " messages";
  }
}

}  // namespace
}  // namespace axon
