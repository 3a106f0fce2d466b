// The fixed shared memory of a node's pool (issue 15): sized by its config,
// not by the largest table the layout allows.
#include <gtest/gtest.h>

#include "transports/shm/pool_segment.hpp"

namespace axon::shm {
namespace {

TEST(PoolLayout, CostsABlockAreaPlus256BytesPerConnectionAnd64PerQueueSlot) {
  const PoolLayout none = PoolLayout::of(0, 0);
  const PoolLayout sut = PoolLayout::of(100, 1000);

  EXPECT_EQ(sut.queue_slots_offset - sut.connections_offset, 100U * 256U);
  EXPECT_EQ(sut.chunk_area_offset - sut.queue_slots_offset, 1000U * 64U);
  EXPECT_EQ(sut.chunk_area_offset - none.chunk_area_offset, 100U * 256U + 1000U * 64U);
  EXPECT_LT(none.chunk_area_offset, 20U * 1024U) << "header and 32 publisher blocks (576 bytes each)";
}

TEST(PoolLayout, TheDefaultsTakeUnderAThirdOfAMegabyte) {
  // It was 4.2 MiB: 256 connections with a 256-slot ring each.
  const PoolLayout sut = PoolLayout::of(kDefaultConnectionsPerNode, kDefaultQueueSlotsPerNode);

  EXPECT_LT(sut.segment_bytes(0), 340U * 1024U) << "with the wide ledger's blocks: 18 KiB of them";
}

TEST(PoolLayout, RefusesCountsOutOfRange) {
  EXPECT_TRUE(PoolLayout::counts_in_range(1, 1));
  EXPECT_TRUE(PoolLayout::counts_in_range(kMaxConnectionsPerNode, kMaxQueueSlotsPerNode));
  EXPECT_FALSE(PoolLayout::counts_in_range(0, 1));
  EXPECT_FALSE(PoolLayout::counts_in_range(1, 0));
  EXPECT_FALSE(PoolLayout::counts_in_range(kMaxConnectionsPerNode + 1, 1));
  EXPECT_FALSE(PoolLayout::counts_in_range(1, kMaxQueueSlotsPerNode + 1));
}

}  // namespace
}  // namespace axon::shm
