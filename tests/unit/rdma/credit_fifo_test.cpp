// The send side's credits: the per-stream FIFO (oldest fitting grant first),
// the queue pair's duplicate-slot check, forgetting on a fault, and a
// two-thread run of producer (RDMA thread) and consumer (publisher).
#include "transports/rdma/credit_fifo.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <random>
#include <thread>
#include <vector>

#include "transports/rdma/granted_slots.hpp"
#include "transports/shm/spsc_ring.hpp"

namespace axon::rdma {
namespace {

GrantEntry grant(std::uint8_t size_class, std::uint32_t slot, std::uint32_t capacity, std::uint64_t address = 0) {
  return {.address = address == 0 ? 0x10000 + std::uint64_t{slot} * 0x1000 : address,
          .capacity_bytes = capacity,
          .slot = slot,
          .size_class = size_class};
}

TEST(RdmaCreditFifo, TakesCreditsOldestFirst) {
  GrantedSlots slots(8);
  CreditFifo sut(slots, 8);
  for (std::uint32_t s = 0; s < 3; ++s) {
    ASSERT_EQ(sut.offer(grant(1, s, 4096)), OfferStatus::kAccepted);
  }
  EXPECT_EQ(sut.credits(), 3U);
  for (std::uint32_t s = 0; s < 3; ++s) {
    const CreditTake taken = sut.take_fitting(4096);
    ASSERT_EQ(taken.status, TakeStatus::kTaken);
    EXPECT_EQ(taken.grant, grant(1, s, 4096));
  }
  EXPECT_EQ(sut.take_fitting(1).status, TakeStatus::kNoCredit);
  EXPECT_EQ(sut.credits(), 0U);
}

TEST(RdmaCreditFifo, TakesTheOldestCreditThatFitsAndKeepsTheOthersInOrder) {
  GrantedSlots slots(8);
  CreditFifo sut(slots, 8);
  ASSERT_EQ(sut.offer(grant(0, 0, 256)), OfferStatus::kAccepted);
  ASSERT_EQ(sut.offer(grant(1, 0, 4096)), OfferStatus::kAccepted);
  ASSERT_EQ(sut.offer(grant(0, 1, 256)), OfferStatus::kAccepted);
  ASSERT_EQ(sut.offer(grant(1, 1, 4096)), OfferStatus::kAccepted);

  // The head (256 B) does not fit 1000 bytes: the oldest 4 KiB grant does.
  EXPECT_EQ(sut.take_fitting(1000).grant, grant(1, 0, 4096));
  // The skipped head is still the oldest, then the second 256 B grant.
  EXPECT_EQ(sut.take_fitting(100).grant, grant(0, 0, 256));
  EXPECT_EQ(sut.take_fitting(256).grant, grant(0, 1, 256));
  EXPECT_EQ(sut.take_fitting(4096).grant, grant(1, 1, 4096));
  EXPECT_EQ(sut.credits(), 0U);
}

TEST(RdmaCreditFifo, SaysNoCreditAndNoneFitsAsOutcomes) {
  GrantedSlots slots(8);
  CreditFifo sut(slots, 8);
  EXPECT_EQ(sut.take_fitting(0).status, TakeStatus::kNoCredit);
  ASSERT_EQ(sut.offer(grant(0, 3, 256)), OfferStatus::kAccepted);
  EXPECT_EQ(sut.take_fitting(257).status, TakeStatus::kNoneFits);
  EXPECT_EQ(sut.credits(), 1U);  // the grant that does not fit stays
  EXPECT_TRUE(slots.outstanding(0, 3));
  const CreditTake taken = sut.take_fitting(256);
  ASSERT_EQ(taken.status, TakeStatus::kTaken);
  EXPECT_EQ(taken.grant.slot, 3U);
}

TEST(RdmaCreditFifo, HoldsExactlyItsCapacityEvenWhenNotAPowerOfTwo) {
  GrantedSlots slots(16);
  CreditFifo sut(slots, 3);
  EXPECT_EQ(sut.capacity(), 3U);
  for (std::uint32_t s = 0; s < 3; ++s) {
    ASSERT_EQ(sut.offer(grant(2, s, 65536)), OfferStatus::kAccepted);
  }
  EXPECT_EQ(sut.offer(grant(2, 3, 65536)), OfferStatus::kFifoFull);
  EXPECT_FALSE(slots.outstanding(2, 3));  // a refused grant claims no slot
  ASSERT_EQ(sut.take_fitting(1).status, TakeStatus::kTaken);
  EXPECT_EQ(sut.offer(grant(2, 3, 65536)), OfferStatus::kAccepted);
  EXPECT_EQ(sut.credits(), 3U);
}

TEST(RdmaCreditFifo, RefusesASlotGrantedAgainWhileOutstanding) {
  GrantedSlots slots(8);
  CreditFifo sut(slots, 8);
  ASSERT_EQ(sut.offer(grant(1, 4, 4096)), OfferStatus::kAccepted);
  EXPECT_EQ(sut.offer(grant(1, 4, 4096, 0x99000)), OfferStatus::kDuplicateSlot);
  EXPECT_EQ(sut.credits(), 1U);
  // The same slot number in another class is another slot.
  EXPECT_EQ(sut.offer(grant(2, 4, 65536)), OfferStatus::kAccepted);
  // Taken (before the write is posted), the slot is no longer outstanding.
  ASSERT_EQ(sut.take_fitting(4096).grant.slot, 4U);
  EXPECT_FALSE(slots.outstanding(1, 4));
  EXPECT_EQ(sut.offer(grant(1, 4, 4096)), OfferStatus::kAccepted);
}

TEST(RdmaCreditFifo, TheDuplicateCheckSpansTheQueuePairsStreams) {
  GrantedSlots slots(16);
  CreditFifo stream_a(slots, 8);
  CreditFifo stream_b(slots, 8);
  ASSERT_EQ(stream_a.offer(grant(0, 7, 256)), OfferStatus::kAccepted);
  EXPECT_EQ(stream_b.offer(grant(0, 7, 256)), OfferStatus::kDuplicateSlot);
  ASSERT_EQ(stream_a.take_fitting(1).status, TakeStatus::kTaken);
  EXPECT_EQ(stream_b.offer(grant(0, 7, 256)), OfferStatus::kAccepted);
}

TEST(RdmaCreditFifo, RefusesMoreOutstandingGrantsThanTheQueuePairHolds) {
  GrantedSlots slots(2);
  CreditFifo stream_a(slots, 8);
  CreditFifo stream_b(slots, 8);
  ASSERT_EQ(stream_a.offer(grant(0, 0, 256)), OfferStatus::kAccepted);
  ASSERT_EQ(stream_b.offer(grant(0, 1, 256)), OfferStatus::kAccepted);
  EXPECT_EQ(stream_a.offer(grant(0, 2, 256)), OfferStatus::kTooManyOutstanding);
  EXPECT_EQ(stream_a.credits(), 1U);
  ASSERT_EQ(stream_b.take_fitting(1).status, TakeStatus::kTaken);
  EXPECT_EQ(stream_a.offer(grant(0, 2, 256)), OfferStatus::kAccepted);  // the freed cell is reused
}

TEST(RdmaCreditFifo, RefusesSlotNamesOutsideTheImmediate) {
  GrantedSlots slots(4);
  CreditFifo sut(slots, 4);
  EXPECT_EQ(sut.offer(grant(16, 0, 256)), OfferStatus::kInvalidSlotName);
  EXPECT_EQ(sut.offer(grant(0, 1U << 28, 256)), OfferStatus::kInvalidSlotName);
  EXPECT_EQ(sut.offer(grant(15, (1U << 28) - 1, 1)), OfferStatus::kAccepted);
  EXPECT_EQ(sut.credits(), 1U);
}

TEST(RdmaCreditFifo, ForgetAllGivesUpEveryCreditAndItsSlot) {
  GrantedSlots slots(8);
  CreditFifo sut(slots, 8);
  for (std::uint32_t s = 0; s < 5; ++s) {
    ASSERT_EQ(sut.offer(grant(1, s, 4096)), OfferStatus::kAccepted);
  }
  ASSERT_EQ(sut.take_fitting(1).status, TakeStatus::kTaken);

  EXPECT_EQ(sut.forget_all(), 4U);

  EXPECT_EQ(sut.credits(), 0U);
  EXPECT_EQ(sut.take_fitting(1).status, TakeStatus::kNoCredit);
  EXPECT_EQ(sut.forget_all(), 0U);
  for (std::uint32_t s = 0; s < 5; ++s) {
    EXPECT_FALSE(slots.outstanding(1, s)) << s;
  }
  // All eight credits and cells are free again.
  for (std::uint32_t s = 0; s < 8; ++s) {
    EXPECT_EQ(sut.offer(grant(1, s, 4096)), OfferStatus::kAccepted) << s;
  }
}

TEST(RdmaCreditFifo, TheGrantWordCountsAcceptedCredits) {
  GrantedSlots slots(8);
  CreditFifo sut(slots, 2);
  EXPECT_EQ(sut.grant_word().load(), 0U);
  ASSERT_EQ(sut.offer(grant(0, 0, 256)), OfferStatus::kAccepted);
  ASSERT_EQ(sut.offer(grant(0, 1, 256)), OfferStatus::kAccepted);
  EXPECT_EQ(sut.offer(grant(0, 2, 256)), OfferStatus::kFifoFull);
  EXPECT_EQ(sut.offer(grant(0, 1, 256)), OfferStatus::kFifoFull);
  EXPECT_EQ(sut.grant_word().load(), 2U);
  ASSERT_EQ(sut.take_fitting(1).status, TakeStatus::kTaken);
  EXPECT_EQ(sut.offer(grant(0, 1, 256)), OfferStatus::kDuplicateSlot);
  EXPECT_EQ(sut.grant_word().load(), 2U);
}

// Random offers, takes and forgets against a plain model, across many
// wrap-arounds of a ring whose capacity is not a power of two.
TEST(RdmaCreditFifo, MatchesAPlainModelOverRandomOperations) {
  constexpr std::uint32_t kCapacity = 5;
  constexpr std::array<std::uint32_t, 3> kCapacities = {256, 4096, 65536};
  GrantedSlots slots(kCapacity);
  CreditFifo sut(slots, kCapacity);
  std::deque<GrantEntry> model;
  std::mt19937 random(12345);  // NOLINT(cert-msc51-cpp): reproducible on purpose
  std::uint64_t address = 1;
  std::uint32_t taken = 0;
  for (int step = 0; step < 20000; ++step) {
    const std::uint32_t op = random() % 10;
    if (op < 5) {
      const auto size_class = static_cast<std::uint8_t>(random() % 3);
      const std::uint32_t slot = random() % 4;
      const GrantEntry g = grant(size_class, slot, kCapacities[size_class], address++);
      bool duplicate = false;
      for (const GrantEntry& m : model) {
        duplicate |= m.size_class == g.size_class && m.slot == g.slot;
      }
      const OfferStatus expected = model.size() == kCapacity ? OfferStatus::kFifoFull
                                   : duplicate               ? OfferStatus::kDuplicateSlot
                                                             : OfferStatus::kAccepted;
      ASSERT_EQ(sut.offer(g), expected) << step;
      if (expected == OfferStatus::kAccepted) {
        model.push_back(g);
      }
    } else if (op < 9) {
      const std::uint32_t bytes = random() % 70000;
      auto fit = model.begin();
      while (fit != model.end() && fit->capacity_bytes < bytes) {
        ++fit;
      }
      const CreditTake got = sut.take_fitting(bytes);
      if (model.empty()) {
        ASSERT_EQ(got.status, TakeStatus::kNoCredit) << step;
      } else if (fit == model.end()) {
        ASSERT_EQ(got.status, TakeStatus::kNoneFits) << step;
      } else {
        ASSERT_EQ(got.status, TakeStatus::kTaken) << step;
        ASSERT_EQ(got.grant, *fit) << step;
        model.erase(fit);
        ++taken;
      }
    } else if (random() % 20 == 0) {
      ASSERT_EQ(sut.forget_all(), model.size()) << step;
      model.clear();
    }
    ASSERT_EQ(sut.credits(), model.size()) << step;
  }
  EXPECT_GT(taken, 1000U);  // the run exercised takes, not only refusals
}

// The RDMA thread offers grants while the publisher's thread takes them; a
// taken grant goes back to the producer through a ring (as the write would
// reach the receiver, which re-grants the slot), so the same eight slots are
// granted over and over. Every grant is taken exactly once, per class in the
// order offered, and no re-grant is seen as a duplicate.
TEST(RdmaCreditFifo, TwoThreadsPassEveryCreditExactlyOnce) {
  constexpr std::uint32_t kCredits = 8;
  constexpr std::uint64_t kGrants = 40000;
  constexpr auto kBound = std::chrono::seconds(60);
  struct Returned {
    std::uint64_t name = 0;  // class << 32 | slot
  };
  GrantedSlots slots(kCredits);
  CreditFifo sut(slots, kCredits);
  shm::SpscRing<Returned, 16> returned;
  returned.reset(16);
  std::atomic<bool> stop{false};
  std::atomic<bool> producer_ok{true};
  const auto deadline = std::chrono::steady_clock::now() + kBound;

  std::thread producer([&] {
    std::vector<std::uint64_t> free_names;
    for (std::uint64_t c = 0; c < 2; ++c) {
      for (std::uint64_t s = 0; s < kCredits / 2; ++s) {
        free_names.push_back(c << 32 | s);
      }
    }
    std::uint64_t offered = 0;
    while (offered < kGrants && !stop.load(std::memory_order_relaxed)) {
      Returned back;
      while (returned.try_pop(back)) {
        free_names.push_back(back.name);
      }
      if (free_names.empty()) {
        if (std::chrono::steady_clock::now() > deadline) {
          stop.store(true, std::memory_order_relaxed);
        }
        std::this_thread::yield();
        continue;
      }
      const std::uint64_t name = free_names.back();
      free_names.pop_back();
      const auto size_class = static_cast<std::uint8_t>(name >> 32);
      const GrantEntry g = {.address = offered,
                            .capacity_bytes = size_class == 0 ? 256U : 4096U,
                            .slot = static_cast<std::uint32_t>(name),
                            .size_class = size_class};
      if (sut.offer(g) != OfferStatus::kAccepted) {
        producer_ok.store(false, std::memory_order_relaxed);
        stop.store(true, std::memory_order_relaxed);
        return;
      }
      ++offered;
    }
  });

  std::vector<bool> seen(kGrants, false);
  std::array<std::uint64_t, 2> last_of_class = {0, 0};
  std::array<bool, 2> any_of_class = {false, false};
  std::uint64_t taken = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t too_small = 0;
  std::uint64_t none_fits = 0;
  while (taken < kGrants && !stop.load(std::memory_order_relaxed)) {
    std::uint32_t bytes = taken % 3 == 0 ? 3000 : 100;
    CreditTake got = sut.take_fitting(bytes);
    if (got.status == TakeStatus::kNoneFits) {
      ++none_fits;
      bytes = 1;  // a smaller message: any credit fits
      got = sut.take_fitting(bytes);
    }
    if (got.status != TakeStatus::kTaken) {
      if (std::chrono::steady_clock::now() > deadline) {
        stop.store(true, std::memory_order_relaxed);
      }
      std::this_thread::yield();
      continue;
    }
    const std::uint64_t seq = got.grant.address;
    const std::uint8_t c = got.grant.size_class;
    duplicates += seq >= kGrants || seen[seq] ? 1 : 0;
    if (seq < kGrants) {
      seen[seq] = true;
    }
    out_of_order += any_of_class[c] && seq <= last_of_class[c] ? 1 : 0;
    last_of_class[c] = seq;
    any_of_class[c] = true;
    too_small += got.grant.capacity_bytes < bytes ? 1 : 0;
    ++taken;
    // The ring holds all eight names: pushing never fails.
    EXPECT_TRUE(returned.try_push({.name = std::uint64_t{c} << 32 | got.grant.slot}));
  }
  producer.join();

  EXPECT_TRUE(producer_ok.load()) << "a re-grant was refused";
  EXPECT_FALSE(stop.load()) << "not done within the bound";
  EXPECT_EQ(taken, kGrants);
  EXPECT_EQ(duplicates, 0U);
  EXPECT_EQ(out_of_order, 0U);
  EXPECT_EQ(too_small, 0U);
  EXPECT_EQ(sut.credits(), 0U);
  EXPECT_EQ(sut.grant_word().load(), kGrants);
  for (std::uint32_t s = 0; s < kCredits / 2; ++s) {
    EXPECT_FALSE(slots.outstanding(0, s));
    EXPECT_FALSE(slots.outstanding(1, s));
  }
  RecordProperty("none_fits", static_cast<int>(none_fits));
}

}  // namespace
}  // namespace axon::rdma
