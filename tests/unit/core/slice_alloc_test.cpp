// No heap allocation in the steady state of slices and bytes: loan(n) of
// run-time sizes (zeroed or not), publish, take and drop, the copying
// publish(span), and an executor's dispatch to a callback. The counting
// operator new and malloc are this executable's
// (tests/support/allocation_hooks.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/allocation_hooks.hpp"
#include "tests/support/child_process.hpp"

namespace axon {
namespace {

namespace allocations = test::allocations;

constexpr std::uint64_t kWarmUp = 500;
constexpr std::uint64_t kMeasured = 5'000;

struct Point {
  float x = 0;
  float y = 0;
  float z = 0;
  std::uint32_t ring = 0;
};

class SliceAllocation : public ::testing::Test {
 protected:
  void TearDown() override {
    (void)allocations::stop();
    node.reset();
  }
  static NodeOptions options(std::uint32_t domain) {
    NodeOptions o;
    o.domain_id = domain;
    o.chunk_classes = {{.payload_bytes = 256, .count = 64}, {.payload_bytes = 16 * 1024, .count = 16}};
    return o;
  }
  std::uint32_t domain = test::unique_domain();
  std::shared_ptr<Node> node = *Node::create("slice_alloc_test", options(domain));
};

/// The element count of message i: 0, small and large sizes, both classes.
std::size_t count_of(std::uint64_t i, std::size_t largest) { return (i * 37) % (largest + 1); }

/// loan(n) (zeroed every third), write, publish, take, drop; false on any failure.
template <class T>
bool loan_publish_take(Publisher<T>& pub, Subscriber<T>& sub, std::uint64_t i, std::size_t largest) {
  const std::size_t n = count_of(i, largest);
  auto loan = i % 3 == 0 ? pub.loan(n, kZeroed) : pub.loan(n);
  if (!loan) {
    return false;
  }
  if (n != 0) {
    (*loan)[n - 1] = {};
  }
  if (!pub.publish(std::move(*loan)).ok()) {
    return false;
  }
  auto sample = sub.take();
  return sample.ok() && sample->size() == n;
}

template <class T>
void expect_no_allocation(Node& node, std::size_t largest) {
  auto pub = *node.advertise<T>("frames");
  auto sub = *node.subscribe<T>("frames", {.depth = 8});
  std::uint64_t failures = 0;
  for (std::uint64_t i = 0; i < kWarmUp; ++i) {
    failures += loan_publish_take(*pub, *sub, i, largest) ? 0 : 1;
  }
  allocations::start();
  for (std::uint64_t i = 0; i < kMeasured; ++i) {
    failures += loan_publish_take(*pub, *sub, i, largest) ? 0 : 1;
  }
  const std::uint64_t allocated = allocations::stop();
  EXPECT_EQ(failures, 0U);
  if (allocations::kCounted) {
    EXPECT_EQ(allocated, 0U) << "heap allocations in " << kMeasured << " loan(n) -> publish -> take";
  }
}

TEST_F(SliceAllocation, LoanPublishTakeOfByteSlicesDoesNotAllocate) {
  expect_no_allocation<Slice<std::uint8_t>>(*node, std::size_t{16} * 1024);
}

TEST_F(SliceAllocation, LoanPublishTakeOfStructSlicesDoesNotAllocate) {
  expect_no_allocation<Slice<Point>>(*node, std::size_t{16} * 1024 / sizeof(Point));
}

TEST_F(SliceAllocation, LoanPublishTakeOfBytesDoesNotAllocate) {
  expect_no_allocation<Bytes>(*node, std::size_t{16} * 1024);
}

TEST_F(SliceAllocation, BytesThatCarryATypeDoNotAllocateEither) {
  auto pub = *node->advertise_bytes("floats", type_identity_of<Slice<float>>());
  auto sub = *node->subscribe<Slice<float>>("floats", {.depth = 8});
  std::vector<std::byte> bytes(4000);
  std::uint64_t failures = 0;
  auto once = [&] {
    failures += pub->publish(std::span<const std::byte>(bytes)).ok() ? 0 : 1;
    auto sample = sub->take();
    failures += sample.ok() && sample->size() == 1000 ? 0 : 1;
  };
  for (std::uint64_t i = 0; i < kWarmUp; ++i) {
    once();
  }
  allocations::start();
  for (std::uint64_t i = 0; i < kMeasured; ++i) {
    once();
  }
  const std::uint64_t allocated = allocations::stop();
  EXPECT_EQ(failures, 0U);
  if (allocations::kCounted) {
    EXPECT_EQ(allocated, 0U) << "heap allocations in " << kMeasured << " publish(span) -> take";
  }
}

TEST_F(SliceAllocation, AnExecutorDispatchingSlicesDoesNotAllocate) {
  auto pub = *node->advertise<Slice<float>>("scan");
  std::uint64_t elements = 0;
  auto subscription =
      *node->subscribe<Slice<float>>("scan", [&](const Sample<Slice<float>>& s) { elements += s.size(); });
  SingleThreadedExecutor sut(ExecutorOptions{.wait_strategy = WaitStrategy::busy_spin()});
  ASSERT_TRUE(sut.add(subscription).ok());
  std::uint64_t failures = 0;
  auto once = [&](std::uint64_t i) {
    auto loan = pub->loan(count_of(i, 4096));
    failures += loan && pub->publish(std::move(*loan)).ok() ? 0 : 1;
    auto ran = sut.spin_some();
    failures += ran.ok() && *ran == 1 ? 0 : 1;
  };
  for (std::uint64_t i = 0; i < kWarmUp; ++i) {
    once(i);
  }
  allocations::start();
  for (std::uint64_t i = 0; i < kMeasured; ++i) {
    once(i);
  }
  const std::uint64_t allocated = allocations::stop();
  EXPECT_EQ(failures, 0U);
  EXPECT_GT(elements, 0U);
  if (allocations::kCounted) {
    EXPECT_EQ(allocated, 0U) << "heap allocations in " << kMeasured << " publish -> dispatch -> callback";
  }
}

}  // namespace
}  // namespace axon
