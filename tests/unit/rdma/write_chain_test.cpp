// The split of a message into a chain of writes above the port's largest
// message (transports/rdma/write_chain.hpp): pure arithmetic, no device.
#include "transports/rdma/write_chain.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "transports/rdma/post_write.hpp"

namespace axon::rdma {
namespace {

constexpr std::uint32_t kMiB = std::uint32_t{1} << 20;
constexpr std::uint32_t kRxe = 8 * kMiB;

TEST(RdmaWriteChain, AMessageUpToTheLargestIsOneWrite) {
  EXPECT_EQ(write_chain_parts(0, kRxe), 1U);
  EXPECT_EQ(write_chain_parts(1, kRxe), 1U);
  EXPECT_EQ(write_chain_parts(kRxe, kRxe), 1U);
  EXPECT_EQ(write_chain_part(0, 1, kRxe, kRxe), (WritePart{.offset = 0, .length = kRxe}));
  EXPECT_EQ(write_chain_part(0, 1, 0, kRxe), (WritePart{.offset = 0, .length = 0}));
}

TEST(RdmaWriteChain, SixteenMiBOverRxeIsTwoWritesOfEightMiB) {
  const std::uint32_t length = 16 * kMiB;
  ASSERT_EQ(write_chain_parts(length, kRxe), 2U);
  EXPECT_EQ(write_chain_part(0, 2, length, kRxe), (WritePart{.offset = 0, .length = kRxe}));
  EXPECT_EQ(write_chain_part(1, 2, length, kRxe), (WritePart{.offset = kRxe, .length = kRxe}));
  EXPECT_EQ(write_chain_tail_bytes(length, kRxe), kRxe);
  EXPECT_EQ(write_chain_parts(length, 1024 * kMiB), 1U);  // mlx5: one write
}

TEST(RdmaWriteChain, TheLastPartTakesTheRestAndThePartsCoverTheMessageExactly) {
  for (const std::uint32_t length : {kRxe + 1, 3 * kRxe - 1, 5 * kRxe + 17, kLargestImmediateLength}) {
    const std::uint32_t parts = write_chain_parts(length, kRxe);
    ASSERT_NE(parts, 0U) << length;
    std::uint64_t covered = 0;
    for (std::uint32_t i = 0; i < parts; ++i) {
      const WritePart part = write_chain_part(i, parts, length, kRxe);
      EXPECT_EQ(part.offset, covered) << "part " << i << " of " << length;
      EXPECT_GT(part.length, 0U);
      EXPECT_LE(part.length, kRxe);
      covered += part.length;
    }
    EXPECT_EQ(covered, length);
    EXPECT_EQ(write_chain_tail_bytes(length, kRxe), length - (parts - 1) * kRxe);
  }
  EXPECT_EQ(write_chain_tail_bytes(kRxe + 1, kRxe), 1U);
}

TEST(RdmaWriteChain, TheLargestImmediateMessageFitsTheBoundOverRxeAndMorePartsAreRefused) {
  EXPECT_EQ(write_chain_parts(kLargestImmediateLength, kRxe), kMaxWriteChainParts);
  EXPECT_EQ(write_chain_parts(32 * kRxe, kRxe), 32U);
  EXPECT_EQ(write_chain_parts(32 * kRxe + 1, kRxe), 0U) << "33 parts: beyond the stack arrays";
  EXPECT_EQ(write_chain_parts(16 * kMiB, 64 * 1024), 0U) << "a port of 64 KiB messages: 256 parts";
  EXPECT_EQ(write_chain_parts(1, 0), 0U);
  EXPECT_EQ(write_chain_tail_bytes(32 * kRxe + 1, kRxe), 0U);
}

// The refusals come before the queue pair is touched (no device here: none).
TEST(RdmaPostWrite, RefusesAChainBeyondTheBoundAsAValueWithoutPosting) {
  SendQueueBudget budget(64);
  const auto sut = post_write_with_imm(nullptr, budget, {.length = 32 * kRxe + 1}, kRxe);
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->outcome, WriteOutcome::kTooManyParts);
  EXPECT_EQ(budget.outstanding(), 0U);
}

TEST(RdmaPostWrite, SaysTheSendQueueIsFullWhenTheChainDoesNotFit) {
  SendQueueBudget budget(4);
  budget.take(3, true);
  const auto sut = post_write_with_imm(nullptr, budget, {.length = 16 * kMiB}, kRxe);
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->outcome, WriteOutcome::kSendQueueFull) << "two parts, one free entry";
  EXPECT_EQ(budget.outstanding(), 3U);
}

}  // namespace
}  // namespace axon::rdma
