// The immediate value's bit budget and its checks of what another host sent.
#include "transports/rdma/immediate.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace axon::rdma {
namespace {

constexpr std::uint32_t kKiB = 1024;
constexpr std::uint32_t kMiB = 1024 * kKiB;
// The payload capacities of default_chunk_classes().
constexpr std::array<std::uint32_t, 6> kDefaultClasses = {256, 4 * kKiB, 64 * kKiB, kMiB, 4 * kMiB, 16 * kMiB};

TEST(RdmaImmediate, TheBudgetOfTheDefaultClassesIsTheDesignsTable) {
  constexpr std::array<std::uint32_t, 6> kLengthBits = {9, 13, 17, 21, 23, 25};
  constexpr std::array<std::uint32_t, 6> kSlots = {524288, 32768, 2048, 128, 32, 8};
  for (std::size_t c = 0; c < kDefaultClasses.size(); ++c) {
    const auto split = immediate_split(kDefaultClasses[c]);
    ASSERT_TRUE(split) << kDefaultClasses[c];
    EXPECT_EQ(split->length_bits, kLengthBits[c]) << kDefaultClasses[c];
    EXPECT_EQ(max_grant_slots(kDefaultClasses[c]), kSlots[c]) << kDefaultClasses[c];
  }
}

TEST(RdmaImmediate, ClassesOf256MiBOrMoreCannotBeReceived) {
  EXPECT_EQ(max_grant_slots(256 * kMiB - 1), 1U);
  EXPECT_EQ(max_grant_slots(256 * kMiB), 0U);
  EXPECT_FALSE(immediate_split(1024 * kMiB));
  EXPECT_FALSE(encode_immediate({.size_class = 0, .slot = 0, .length = 1}, 256 * kMiB));
}

TEST(RdmaImmediate, EveryFieldAtItsLimitsRoundTrips) {
  for (std::uint32_t c = 0; c < kDefaultClasses.size(); ++c) {
    const std::uint32_t capacity = kDefaultClasses[c];
    for (const ImmediateFields f :
         {ImmediateFields{.size_class = c, .slot = 0, .length = 0},
          ImmediateFields{.size_class = c, .slot = max_grant_slots(capacity) - 1, .length = capacity}}) {
      const auto imm = encode_immediate(f, capacity);
      ASSERT_TRUE(imm) << capacity;
      EXPECT_EQ(decode_immediate(*imm, kDefaultClasses), f) << capacity;
    }
  }
}

TEST(RdmaImmediate, FieldsThatDoNotFitAreNotEncoded) {
  EXPECT_FALSE(encode_immediate({.size_class = 5, .slot = 8, .length = 0}, 16 * kMiB));
  EXPECT_FALSE(encode_immediate({.size_class = 5, .slot = 0, .length = 16 * kMiB + 1}, 16 * kMiB));
  EXPECT_FALSE(encode_immediate({.size_class = 16, .slot = 0, .length = 0}, 256));
}

TEST(RdmaImmediate, WhatAnotherHostSentIsCheckedBeforeItIsUsed) {
  // A class the pool does not have.
  EXPECT_FALSE(decode_immediate(6U << kSlotAndLengthBits, kDefaultClasses));
  EXPECT_FALSE(decode_immediate(0xFFFFFFFFU, kDefaultClasses));
  // A length above the class's capacity that its bits can still say: 256 B
  // has 9 length bits (0..511).
  EXPECT_FALSE(decode_immediate(257U, kDefaultClasses));
  EXPECT_TRUE(decode_immediate(256U, kDefaultClasses));
  // A class too large to receive, even if the pool has one.
  constexpr std::array<std::uint32_t, 1> kHuge = {512 * kMiB};
  EXPECT_FALSE(decode_immediate(0U, kHuge));
}

}  // namespace
}  // namespace axon::rdma
