// The receive side's grant table: slots per class, grants, the checks of a
// write's immediate (from another host), its byte_len after a chain of
// writes at the peer's max_msg_sz, and the reclaims of a fault.
#include "transports/rdma/grant_table.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include "transports/rdma/immediate.hpp"

namespace axon::rdma {
namespace {

constexpr std::uint32_t kKiB = 1024;
constexpr std::uint32_t kMiB = 1024 * kKiB;
// default_chunk_classes(): payload capacity and chunks.
constexpr std::array<GrantClass, 6> kDefaultPool = {
    {{256, 1024}, {4 * kKiB, 256}, {64 * kKiB, 64}, {kMiB, 8}, {4 * kMiB, 4}, {16 * kMiB, 2}}};
constexpr std::uint32_t k16MiBClass = 5;
// The peer's port's max_msg_sz: mlx5's (every message of the default pool is
// one write) and rxe's.
constexpr std::uint32_t kOneWrite = 1024 * kMiB;
constexpr std::uint32_t kRxe = 8 * kMiB;

GrantTable default_table(std::uint32_t peer_max_message_bytes = kOneWrite) {
  auto table = GrantTable::create(kDefaultPool, peer_max_message_bytes);
  EXPECT_TRUE(table.ok()) << table.error().message();
  return std::move(*table);
}

std::uint32_t immediate(std::uint32_t size_class, std::uint32_t slot, std::uint32_t length) {
  const auto imm = encode_immediate({.size_class = size_class, .slot = slot, .length = length},
                                    kDefaultPool[size_class].capacity_bytes);
  EXPECT_TRUE(imm);
  return imm.value_or(0);
}

using Reclaimed = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;

TEST(RdmaGrantTable, SlotsPerClassAreTheSlotBitsCappedByTheClassesChunks) {
  const GrantTable sut = default_table();
  // Slot bits allow 524288, 32768, 2048, 128, 32, 8; the pool has fewer chunks
  // of each class: the 16 MiB class has 3 slot bits but only 2 chunks.
  constexpr std::array<std::uint32_t, 6> kSlots = {1024, 256, 64, 8, 4, 2};
  ASSERT_EQ(sut.class_count(), 6U);
  for (std::uint32_t c = 0; c < 6; ++c) {
    EXPECT_EQ(sut.slots(c), kSlots[c]) << c;
    EXPECT_EQ(sut.outstanding(c), 0U) << c;
  }
  EXPECT_EQ(sut.slots(6), 0U);

  // Where the pool has more chunks than slot bits, the bits cap it.
  constexpr std::array<GrantClass, 3> kBig = {{{kMiB, 1000}, {16 * kMiB, 100}, {256 * kMiB, 4}}};
  auto big = GrantTable::create(kBig, kOneWrite);
  ASSERT_TRUE(big.ok()) << big.error().message();
  EXPECT_EQ(big->slots(0), 128U);
  EXPECT_EQ(big->slots(1), 8U);
  EXPECT_EQ(big->slots(2), 0U);  // 256 MiB: not received by RDMA
}

TEST(RdmaGrantTable, RefusesAPoolItCannotDescribe) {
  std::array<GrantClass, 17> too_many{};
  too_many.fill({256, 1});
  auto many = GrantTable::create(too_many, kOneWrite);
  ASSERT_TRUE(many.failed());
  EXPECT_EQ(many.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(many.error().message().find("17 chunk classes"), std::string_view::npos) << many.error().message();

  constexpr std::array<GrantClass, 2> kZero = {{{256, 4}, {0, 4}}};
  auto zero = GrantTable::create(kZero, kOneWrite);
  ASSERT_TRUE(zero.failed());
  EXPECT_NE(zero.error().message().find("class 1 has a payload capacity of 0"), std::string_view::npos)
      << zero.error().message();

  auto no_port = GrantTable::create(kDefaultPool, 0);
  ASSERT_TRUE(no_port.failed());
  EXPECT_EQ(no_port.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(no_port.error().message().find("largest message (max_msg_sz) of 0 bytes"), std::string_view::npos)
      << no_port.error().message();
}

TEST(RdmaGrantTable, GrantsEverySlotOfAClassThenSaysFull) {
  GrantTable sut = default_table();
  const GrantResult first = sut.grant(k16MiBClass, 1356, 7);
  const GrantResult second = sut.grant(k16MiBClass, 1357, 7);
  const GrantResult third = sut.grant(k16MiBClass, 1355, 7);
  ASSERT_EQ(first.status, GrantStatus::kGranted);
  ASSERT_EQ(second.status, GrantStatus::kGranted);
  EXPECT_NE(first.slot, second.slot);
  EXPECT_LT(first.slot, 2U);
  EXPECT_LT(second.slot, 2U);
  EXPECT_EQ(third.status, GrantStatus::kFull);
  EXPECT_EQ(sut.outstanding(k16MiBClass), 2U);
  // Another class is not affected.
  EXPECT_EQ(sut.grant(0, 3, 7).status, GrantStatus::kGranted);

  // A delivered chunk's slot can be granted again.
  ASSERT_TRUE(sut.resolve(immediate(k16MiBClass, first.slot, 16 * kMiB), 16 * kMiB).accepted());
  EXPECT_TRUE(sut.release({.size_class = k16MiBClass, .slot = first.slot}));
  const GrantResult again = sut.grant(k16MiBClass, 1355, 8);
  ASSERT_EQ(again.status, GrantStatus::kGranted);
  EXPECT_EQ(again.slot, first.slot);
}

TEST(RdmaGrantTable, RefusesGrantsThatNameNoSlot) {
  constexpr std::array<GrantClass, 3> kPool = {{{256, 4}, {256 * kMiB, 2}, {4 * kKiB, 0}}};
  auto sut = GrantTable::create(kPool, kOneWrite);
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->grant(0, 1, 0).status, GrantStatus::kZeroStreamId);
  EXPECT_EQ(sut->grant(1, 1, 1).status, GrantStatus::kClassNotGrantable);  // 256 MiB
  EXPECT_EQ(sut->grant(2, 1, 1).status, GrantStatus::kClassNotGrantable);  // no chunks
  EXPECT_EQ(sut->grant(3, 1, 1).status, GrantStatus::kClassNotGrantable);  // no such class
  EXPECT_EQ(sut->outstanding(0), 0U);
}

TEST(RdmaGrantTable, ResolvesAWriteIntoAGrantedSlotToItsChunkAndStream) {
  GrantTable sut = default_table();
  const GrantResult granted = sut.grant(1, 777, 42);
  ASSERT_EQ(granted.status, GrantStatus::kGranted);

  const ResolvedWrite write = sut.resolve(immediate(1, granted.slot, 100), 100);

  ASSERT_TRUE(write.accepted()) << to_string(write.refusal);
  EXPECT_EQ(write.size_class, 1U);
  EXPECT_EQ(write.slot, granted.slot);
  EXPECT_EQ(write.chunk_index, 777U);
  EXPECT_EQ(write.stream_id, 42U);
  EXPECT_EQ(write.length, 100U);
  EXPECT_EQ(sut.outstanding(1), 1U);  // written, not yet released
}

TEST(RdmaGrantTable, EverySlotOfTheDefaultPoolResolvesAtFullLength) {
  GrantTable sut = default_table();
  std::uint32_t chunk = 0;
  for (std::uint32_t c = 0; c < sut.class_count(); ++c) {
    for (std::uint32_t i = 0; i < sut.slots(c); ++i) {
      const GrantResult granted = sut.grant(c, chunk + i, c + 1);
      ASSERT_EQ(granted.status, GrantStatus::kGranted) << c << " " << i;
      const std::uint32_t capacity = kDefaultPool[c].capacity_bytes;
      const ResolvedWrite write = sut.resolve(immediate(c, granted.slot, capacity), capacity);
      ASSERT_TRUE(write.accepted()) << c << " " << i << ": " << to_string(write.refusal);
      EXPECT_EQ(write.chunk_index, chunk + i);
      EXPECT_EQ(write.stream_id, c + 1);
      EXPECT_EQ(write.length, capacity);
    }
    EXPECT_EQ(sut.grant(c, 0, 1).status, GrantStatus::kFull) << c;
    chunk += sut.slots(c);
  }
}

TEST(RdmaGrantTable, RefusesImmediatesThatNameNoGrantedChunkAndChangesNothing) {
  GrantTable sut = default_table();
  const GrantResult small = sut.grant(0, 5, 1);
  const GrantResult big = sut.grant(k16MiBClass, 1357, 1);
  ASSERT_EQ(small.status, GrantStatus::kGranted);
  ASSERT_EQ(big.status, GrantStatus::kGranted);

  // Class 6 and 15: the pool has 6 classes.
  EXPECT_EQ(sut.resolve(6U << kSlotAndLengthBits, 0).refusal, WriteRefusal::kNoSuchClass);
  EXPECT_EQ(sut.resolve(0xFFFFFFFFU, 0).refusal, WriteRefusal::kNoSuchClass);
  // 256 B has 9 length bits: 257 .. 511 fit the bits but not the chunk.
  EXPECT_EQ(sut.resolve(small.slot << 9 | 257U, 257).refusal, WriteRefusal::kLengthAboveCapacity);
  EXPECT_EQ(sut.resolve(small.slot << 9 | 511U, 511).refusal, WriteRefusal::kLengthAboveCapacity);
  // A slot in range but not granted.
  EXPECT_EQ(sut.resolve(immediate(0, small.slot + 1, 10), 10).refusal, WriteRefusal::kSlotNotGranted);
  // The 16 MiB class: 3 slot bits say 0..7, but only slots 0 and 1 exist.
  for (std::uint32_t slot = 2; slot < 8; ++slot) {
    EXPECT_EQ(sut.resolve(immediate(k16MiBClass, slot, 1), 1).refusal, WriteRefusal::kSlotNotGranted) << slot;
  }
  EXPECT_EQ(sut.resolve(immediate(k16MiBClass, 1 - big.slot, 1), 1).refusal, WriteRefusal::kSlotNotGranted);
  // byte_len must be the immediate's length, both ways.
  EXPECT_EQ(sut.resolve(immediate(0, small.slot, 10), 11).refusal, WriteRefusal::kByteLenMismatch);
  EXPECT_EQ(sut.resolve(immediate(0, small.slot, 10), 9).refusal, WriteRefusal::kByteLenMismatch);

  // None of that changed the table: both grants still resolve once.
  EXPECT_EQ(sut.outstanding(0), 1U);
  EXPECT_EQ(sut.outstanding(k16MiBClass), 1U);
  ASSERT_TRUE(sut.resolve(immediate(0, small.slot, 10), 10).accepted());
  ASSERT_TRUE(sut.resolve(immediate(k16MiBClass, big.slot, 16 * kMiB), 16 * kMiB).accepted());
  // A second write into a slot whose chunk is being delivered.
  EXPECT_EQ(sut.resolve(immediate(0, small.slot, 10), 10).refusal, WriteRefusal::kSlotAlreadyWritten);
  // After release the slot is free: a write into it is not granted.
  EXPECT_TRUE(sut.release({.size_class = 0, .slot = small.slot}));
  EXPECT_EQ(sut.resolve(immediate(0, small.slot, 10), 10).refusal, WriteRefusal::kSlotNotGranted);
}

TEST(RdmaGrantTable, AMessageAboveThePeersMaxMessageIsCheckedAgainstItsChainsLastPart) {
  // 16 MiB at mlx5's 1 GiB is one write: byte_len is the whole length.
  GrantTable one_write = default_table(kOneWrite);
  const GrantResult whole = one_write.grant(k16MiBClass, 1, 1);
  ASSERT_EQ(whole.status, GrantStatus::kGranted);
  EXPECT_EQ(one_write.resolve(immediate(k16MiBClass, whole.slot, 16 * kMiB), 8 * kMiB).refusal,
            WriteRefusal::kByteLenMismatch);
  EXPECT_TRUE(one_write.resolve(immediate(k16MiBClass, whole.slot, 16 * kMiB), 16 * kMiB).accepted());

  // At 4 MiB, 16 MiB is four writes; the completion reports the last, 4 MiB,
  // and the whole length is a broken peer. 10 MiB ends with 2 MiB.
  GrantTable chained = default_table(4 * kMiB);
  const GrantResult a = chained.grant(k16MiBClass, 1, 1);
  const GrantResult b = chained.grant(k16MiBClass, 2, 1);
  ASSERT_EQ(a.status, GrantStatus::kGranted);
  ASSERT_EQ(b.status, GrantStatus::kGranted);
  EXPECT_EQ(chained.resolve(immediate(k16MiBClass, a.slot, 16 * kMiB), 16 * kMiB).refusal,
            WriteRefusal::kByteLenMismatch);
  const ResolvedWrite full = chained.resolve(immediate(k16MiBClass, a.slot, 16 * kMiB), 4 * kMiB);
  ASSERT_TRUE(full.accepted()) << to_string(full.refusal);
  EXPECT_EQ(full.length, 16 * kMiB);  // the message's length, not the part's
  EXPECT_EQ(chained.resolve(immediate(k16MiBClass, b.slot, 10 * kMiB), 10 * kMiB).refusal,
            WriteRefusal::kByteLenMismatch);
  EXPECT_EQ(chained.resolve(immediate(k16MiBClass, b.slot, 10 * kMiB), 4 * kMiB).refusal,
            WriteRefusal::kByteLenMismatch);
  EXPECT_TRUE(chained.resolve(immediate(k16MiBClass, b.slot, 10 * kMiB), 2 * kMiB).accepted());

  // rxe: 16 MiB is 8 MiB + 8 MiB (measured in the guest); below it, one write.
  GrantTable rxe = default_table(kRxe);
  const GrantResult r = rxe.grant(k16MiBClass, 1, 1);
  const GrantResult small = rxe.grant(3, 2, 1);
  EXPECT_EQ(rxe.resolve(immediate(k16MiBClass, r.slot, 16 * kMiB), 16 * kMiB).refusal, WriteRefusal::kByteLenMismatch);
  EXPECT_TRUE(rxe.resolve(immediate(k16MiBClass, r.slot, 16 * kMiB), 8 * kMiB).accepted());
  EXPECT_TRUE(rxe.resolve(immediate(3, small.slot, kMiB), kMiB).accepted());
}

TEST(RdmaGrantTable, AMessageNoChainCanCarryIsRefusedAndChangesNothing) {
  // At 64 KiB a chain of 32 parts carries 2 MiB at most.
  GrantTable sut = default_table(64 * kKiB);
  const GrantResult big = sut.grant(k16MiBClass, 1, 1);
  const GrantResult mid = sut.grant(4, 2, 1);
  ASSERT_EQ(big.status, GrantStatus::kGranted);
  ASSERT_EQ(mid.status, GrantStatus::kGranted);
  for (const std::uint32_t byte_len : {16 * kMiB, 64 * kKiB, 0U}) {
    EXPECT_EQ(sut.resolve(immediate(k16MiBClass, big.slot, 16 * kMiB), byte_len).refusal, WriteRefusal::kChainTooLong)
        << byte_len;
  }
  EXPECT_EQ(sut.resolve(immediate(4, mid.slot, 2 * kMiB + 1), 1).refusal, WriteRefusal::kChainTooLong);
  EXPECT_NE(to_string(WriteRefusal::kChainTooLong).find("max_msg_sz"), std::string_view::npos);
  EXPECT_EQ(sut.outstanding(k16MiBClass), 1U);
  // 32 parts exactly is a chain.
  EXPECT_TRUE(sut.resolve(immediate(4, mid.slot, 2 * kMiB), 64 * kKiB).accepted());
  EXPECT_TRUE(sut.resolve(immediate(k16MiBClass, big.slot, 2 * kMiB - 1), 64 * kKiB - 1).accepted());
}

TEST(RdmaGrantTable, AClassTooLargeForTheImmediateIsNotReceivable) {
  constexpr std::array<GrantClass, 2> kPool = {{{256 * kMiB, 2}, {256, 2}}};
  auto sut = GrantTable::create(kPool, kOneWrite);
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->resolve(0, 0).refusal, WriteRefusal::kClassNotReceivable);
  EXPECT_EQ(sut->resolve(0x0FFFFFFFU, 0).refusal, WriteRefusal::kClassNotReceivable);
}

TEST(RdmaGrantTable, EveryRefusalHasItsOwnWords) {
  std::set<std::string_view> words;
  for (std::uint8_t r = 0; r < static_cast<std::uint8_t>(WriteRefusal::kCount); ++r) {
    const std::string_view w = to_string(static_cast<WriteRefusal>(r));
    EXPECT_EQ(w.find("unknown"), std::string_view::npos) << int{r};
    words.insert(w);
  }
  EXPECT_EQ(words.size(), static_cast<std::size_t>(WriteRefusal::kCount));
}

TEST(RdmaGrantTable, ReleasesOnlyWrittenSlots) {
  GrantTable sut = default_table();
  const GrantResult granted = sut.grant(2, 9, 3);
  ASSERT_EQ(granted.status, GrantStatus::kGranted);
  EXPECT_FALSE(sut.release({.size_class = 2, .slot = granted.slot}));      // granted, not written
  EXPECT_FALSE(sut.release({.size_class = 2, .slot = granted.slot + 1}));  // free
  EXPECT_FALSE(sut.release({.size_class = 2, .slot = 64}));                // beyond the class's slots
  EXPECT_FALSE(sut.release({.size_class = 6, .slot = 0}));                 // no such class
  EXPECT_EQ(sut.outstanding(2), 1U);
  ASSERT_TRUE(sut.resolve(immediate(2, granted.slot, 0), 0).accepted());
  EXPECT_TRUE(sut.release({.size_class = 2, .slot = granted.slot}));
  EXPECT_FALSE(sut.release({.size_class = 2, .slot = granted.slot}));
  EXPECT_EQ(sut.outstanding(2), 0U);
}

TEST(RdmaGrantTable, AFreedSlotIsReusedAfterTheOtherFreeOnes) {
  GrantTable sut = default_table();
  const GrantResult a = sut.grant(3, 1, 1);  // 1 MiB: 8 slots
  ASSERT_EQ(a.status, GrantStatus::kGranted);
  ASSERT_TRUE(sut.resolve(immediate(3, a.slot, 1), 1).accepted());
  ASSERT_TRUE(sut.release({.size_class = 3, .slot = a.slot}));
  std::vector<std::uint32_t> order;
  for (int i = 0; i < 8; ++i) {
    const GrantResult g = sut.grant(3, 2, 1);
    ASSERT_EQ(g.status, GrantStatus::kGranted);
    order.push_back(g.slot);
  }
  EXPECT_EQ(order.back(), a.slot);
  EXPECT_EQ(std::set<std::uint32_t>(order.begin(), order.end()).size(), 8U);
}

TEST(RdmaGrantTable, ReclaimGivesEveryGrantedUnwrittenChunkBackExactlyOnce) {
  GrantTable sut = default_table();
  std::set<Reclaimed> stream1;
  std::set<Reclaimed> stream2;
  for (std::uint32_t c = 0; c < 6; ++c) {
    for (std::uint32_t i = 0; i < 2; ++i) {
      const std::uint32_t chunk = 100 * c + i;
      for (const std::uint32_t stream : {1U, 2U}) {
        const std::uint32_t chunk_of_stream = chunk + 50 * (stream - 1);
        const GrantResult g = sut.grant(c, chunk_of_stream, stream);
        if (g.status == GrantStatus::kFull) {
          EXPECT_EQ(c, k16MiBClass);  // two chunks only
          continue;
        }
        ASSERT_EQ(g.status, GrantStatus::kGranted);
        (stream == 1 ? stream1 : stream2).insert({c, g.slot, chunk_of_stream, stream});
      }
    }
  }
  ASSERT_EQ(sut.outstanding(k16MiBClass), 2U);
  // One chunk of stream 1 is written (being delivered): it stays the caller's.
  const Reclaimed written = *stream1.begin();
  ASSERT_TRUE(sut.resolve(immediate(std::get<0>(written), std::get<1>(written), 3), 3).accepted());
  stream1.erase(written);

  std::multiset<Reclaimed> got1;
  const std::uint32_t n1 = sut.reclaim_stream(1, [&](const ReclaimedChunk& r) {
    got1.insert({r.size_class, r.slot, r.chunk_index, r.stream_id});
  });
  EXPECT_EQ(n1, stream1.size());
  EXPECT_EQ(std::set<Reclaimed>(got1.begin(), got1.end()), stream1);
  EXPECT_EQ(got1.size(), stream1.size());  // no chunk twice
  EXPECT_EQ(sut.reclaim_stream(1, [](const ReclaimedChunk&) { ADD_FAILURE() << "reclaimed twice"; }), 0U);

  std::multiset<Reclaimed> got_all;
  const std::uint32_t n_all = sut.reclaim_all([&](const ReclaimedChunk& r) {
    got_all.insert({r.size_class, r.slot, r.chunk_index, r.stream_id});
  });
  EXPECT_EQ(n_all, stream2.size());
  EXPECT_EQ(std::set<Reclaimed>(got_all.begin(), got_all.end()), stream2);
  EXPECT_EQ(got_all.size(), stream2.size());
  EXPECT_EQ(sut.reclaim_all([](const ReclaimedChunk&) { ADD_FAILURE() << "reclaimed twice"; }), 0U);

  // Only the written slot is left out; a reclaimed slot takes no write.
  EXPECT_EQ(sut.outstanding(std::get<0>(written)), 1U);
  for (const Reclaimed& r : stream2) {
    EXPECT_EQ(sut.resolve(immediate(std::get<0>(r), std::get<1>(r), 1), 1).refusal, WriteRefusal::kSlotNotGranted);
  }
  EXPECT_TRUE(sut.release({.size_class = std::get<0>(written), .slot = std::get<1>(written)}));
  for (std::uint32_t c = 0; c < 6; ++c) {
    EXPECT_EQ(sut.outstanding(c), 0U) << c;
  }
  // Every slot can be granted again.
  EXPECT_EQ(sut.grant(k16MiBClass, 1, 9).status, GrantStatus::kGranted);
  EXPECT_EQ(sut.grant(k16MiBClass, 2, 9).status, GrantStatus::kGranted);
  EXPECT_EQ(sut.grant(k16MiBClass, 3, 9).status, GrantStatus::kFull);
}

}  // namespace
}  // namespace axon::rdma
