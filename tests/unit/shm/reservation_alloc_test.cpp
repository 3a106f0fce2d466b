// Loans from a publisher's reserved chunks, and the publish that parks them
// again, allocate nothing (the counting hooks of this executable:
// tests/support/allocation_hooks.cpp).
#include <gtest/gtest.h>

#include "axon/axon.hpp"
#include "tests/support/allocation_hooks.hpp"
#include "tests/support/child_process.hpp"

namespace axon {
namespace {

namespace allocations = test::allocations;

struct Command {
  std::uint64_t sequence = 0;
};

TEST(ReservationAllocations, LoanAndPublishFromAReservationDoNotAllocate) {
  const std::uint32_t domain = test::unique_domain();
  {
    auto node = *Node::create("reservation_alloc", {.domain_id = domain});
    auto pub =
        *node->advertise<Command>("cmd_vel", {.reserved_chunks = 4, .beyond_reservation = BeyondReservation::kRefuse});
    auto sub = *node->subscribe<Command>("cmd_vel", {.depth = 2});
    std::uint64_t taken = 0;
    allocations::start();
    for (std::uint64_t i = 0; i < 10'000; ++i) {
      auto loan = pub->loan();
      ASSERT_TRUE(loan.ok()) << "the subscriber gives every chunk back before the next loan";
      (*loan)->sequence = i;
      ASSERT_TRUE(pub->publish(std::move(*loan)).ok());
      auto sample = sub->take();
      ASSERT_TRUE(sample.ok());
      taken += (*sample)->sequence == i ? 1 : 0;
    }
    const std::uint64_t counted = allocations::stop();
    if (allocations::kCounted) {
      EXPECT_EQ(counted, 0U);
    }
    EXPECT_EQ(taken, 10'000U);
  }
  EXPECT_TRUE(test::domain_files(domain).empty());
}

}  // namespace
}  // namespace axon
