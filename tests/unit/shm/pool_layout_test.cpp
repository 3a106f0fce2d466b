// The fixed shared memory of a node's pool (issue 15): sized by its config,
// not by the largest table the layout allows.
#include <gtest/gtest.h>

#include "transports/shm/pool_segment.hpp"

namespace axon::shm {
namespace {

TEST(PoolLayout, Costs576BytesPerPublisherBlock256PerConnectionAnd64PerQueueSlot) {
  const PoolLayout none = PoolLayout::of(0, 0, 0);
  const PoolLayout sut = PoolLayout::of(10, 100, 1000);

  EXPECT_EQ(sut.connections_offset - sut.blocks_offset, 10U * 576U);
  EXPECT_EQ(sut.queue_slots_offset - sut.connections_offset, 100U * 256U);
  EXPECT_EQ(sut.chunk_area_offset - sut.queue_slots_offset, 1000U * 64U);
  EXPECT_EQ(sut.chunk_area_offset - none.chunk_area_offset, 10U * 576U + 100U * 256U + 1000U * 64U);
  EXPECT_LE(none.chunk_area_offset, 256U) << "the head alone: segment header and the table sizes";
}

TEST(PoolLayout, TheDefaultsTakeUnderAThirdOfAMegabyte) {
  // It was 4.2 MiB: 256 connections with a 256-slot ring each.
  const PoolLayout sut =
      PoolLayout::of(kDefaultPublishersPerNode, kDefaultConnectionsPerNode, kDefaultQueueSlotsPerNode);

  EXPECT_LT(sut.segment_bytes(0), 340U * 1024U) << "with the wide ledger's blocks: 18 KiB of them";
}

TEST(PoolLayout, RefusesCountsOutOfRange) {
  EXPECT_TRUE(PoolLayout::counts_in_range(1, 1, 1));
  EXPECT_TRUE(PoolLayout::counts_in_range(kMaxPublishersPerNode, kMaxConnectionsPerNode, kMaxQueueSlotsPerNode));
  EXPECT_FALSE(PoolLayout::counts_in_range(0, 1, 1));
  EXPECT_FALSE(PoolLayout::counts_in_range(1, 0, 1));
  EXPECT_FALSE(PoolLayout::counts_in_range(1, 1, 0));
  EXPECT_FALSE(PoolLayout::counts_in_range(kMaxPublishersPerNode + 1, 1, 1));
  EXPECT_FALSE(PoolLayout::counts_in_range(1, kMaxConnectionsPerNode + 1, 1));
  EXPECT_FALSE(PoolLayout::counts_in_range(1, 1, kMaxQueueSlotsPerNode + 1));
}

}  // namespace
}  // namespace axon::shm
