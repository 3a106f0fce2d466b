#include "transports/shm/spsc_ring.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

namespace axon::shm {
namespace {

using Ring = SpscRing<std::uint64_t, 8>;

std::unique_ptr<Ring> make_ring(std::uint32_t limit) {
  auto sut = std::make_unique<Ring>();
  sut->reset(limit);
  return sut;
}

TEST(SpscRing, PopsValuesInPushOrder) {
  auto sut = make_ring(8);
  for (std::uint64_t v = 10; v < 15; ++v) {
    ASSERT_TRUE(sut->try_push(v));
  }
  for (std::uint64_t v = 10; v < 15; ++v) {
    std::uint64_t out = 0;
    ASSERT_TRUE(sut->try_pop(out));
    EXPECT_EQ(out, v);
  }
  std::uint64_t out = 0;
  EXPECT_FALSE(sut->try_pop(out));
}

TEST(SpscRing, RejectsPushWhenFull) {
  auto sut = make_ring(8);
  for (std::uint64_t v = 0; v < 8; ++v) {
    ASSERT_TRUE(sut->try_push(v));
  }
  EXPECT_FALSE(sut->try_push(99));
  EXPECT_EQ(sut->size_for_producer(), 8U);
  std::uint64_t out = 0;
  ASSERT_TRUE(sut->try_pop(out));
  EXPECT_TRUE(sut->try_push(99));
}

TEST(SpscRing, HonoursALimitBelowItsCapacity) {
  auto sut = make_ring(3);
  EXPECT_TRUE(sut->try_push(1));
  EXPECT_TRUE(sut->try_push(2));
  EXPECT_TRUE(sut->try_push(3));
  EXPECT_FALSE(sut->try_push(4));
  EXPECT_EQ(sut->size_for_producer(), 3U);
}

TEST(SpscRing, ZeroOrOversizedLimitMeansCapacity) {
  EXPECT_EQ(make_ring(0)->limit(), 8U);
  EXPECT_EQ(make_ring(100)->limit(), 8U);
}

TEST(SpscRing, KeepsOrderAcrossManyWrapArounds) {
  auto sut = make_ring(5);
  std::uint64_t next_push = 0;
  std::uint64_t next_pop = 0;
  for (int round = 0; round < 1000; ++round) {
    while (sut->try_push(next_push)) {
      ++next_push;
    }
    std::uint64_t out = 0;
    for (int k = 0; k < 3 && sut->try_pop(out); ++k) {
      ASSERT_EQ(out, next_pop++);
    }
  }
}

TEST(SpscRing, TransfersAMillionValuesBetweenTwoThreadsInOrder) {
  auto sut = std::make_unique<SpscRing<std::uint64_t, 256>>();
  sut->reset(256);
  constexpr std::uint64_t kCount = 1'000'000;
  std::thread producer([&] {
    for (std::uint64_t v = 1; v <= kCount;) {
      if (sut->try_push(v)) {
        ++v;
      } else {
        std::this_thread::yield();  // two cores: let the consumer run
      }
    }
  });
  std::uint64_t expected = 1;
  while (expected <= kCount) {
    std::uint64_t out = 0;
    if (sut->try_pop(out)) {
      ASSERT_EQ(out, expected);
      ++expected;
    } else {
      std::this_thread::yield();
    }
  }
  producer.join();
  EXPECT_FALSE(sut->has_entry());
}

TEST(SpscRing, KeepsIndicesAndEverySlotOnCacheLinesOfTheirOwn) {
  // The layout itself is the point: producer, consumer and neighbouring
  // entries must not false-share.
  EXPECT_EQ(alignof(Ring), kCacheLine);
  EXPECT_EQ(sizeof(Ring), 2 * kCacheLine + 8 * kCacheLine);
}

struct Descriptor {
  std::uint32_t chunk = 0;
  std::uint32_t bytes = 0;
  std::int64_t stamp = 0;
};

TEST(SpscRing, CarriesWholeEntries) {
  auto sut = std::make_unique<SpscRing<Descriptor, 4>>();
  sut->reset(4);
  ASSERT_TRUE(sut->try_push({.chunk = 7, .bytes = 2048, .stamp = -5}));
  EXPECT_TRUE(sut->has_entry());
  Descriptor out;
  ASSERT_TRUE(sut->try_pop(out));
  EXPECT_EQ(out.chunk, 7U);
  EXPECT_EQ(out.bytes, 2048U);
  EXPECT_EQ(out.stamp, -5);
  EXPECT_FALSE(sut->has_entry());
}

TEST(SpscRing, AResetRingHasNoStaleEntries) {
  auto sut = make_ring(8);
  ASSERT_TRUE(sut->try_push(1));
  ASSERT_TRUE(sut->try_push(2));
  sut->reset(8);
  std::uint64_t out = 0;
  EXPECT_FALSE(sut->try_pop(out)) << "turns were cleared";
  ASSERT_TRUE(sut->try_push(3));
  ASSERT_TRUE(sut->try_pop(out));
  EXPECT_EQ(out, 3U);
}

// Drop-oldest: the producer evicts, the consumer pops by compare-exchange.

std::vector<std::uint64_t> pop_all_contended(Ring& sut) {
  std::vector<std::uint64_t> values;
  for (std::uint64_t out = 0; sut.try_pop_contended(out);) {
    values.push_back(out);
  }
  return values;
}

TEST(SpscRing, EvictOldestRemovesTheOldestEntryOfAFullRing) {
  auto sut = make_ring(4);
  for (std::uint64_t v = 1; v <= 4; ++v) {
    ASSERT_TRUE(sut->try_push(v));
  }
  std::uint64_t evicted = 0;
  ASSERT_TRUE(sut->evict_oldest(evicted));
  EXPECT_EQ(evicted, 1U);
  EXPECT_EQ(sut->size_for_producer(), 3U);
  ASSERT_TRUE(sut->try_push(5));
  EXPECT_FALSE(sut->try_push(6)) << "full again";
  EXPECT_EQ(pop_all_contended(*sut), (std::vector<std::uint64_t>{2, 3, 4, 5}));
}

TEST(SpscRing, EvictOldestRefusesARingThatIsNotFull) {
  auto sut = make_ring(4);
  std::uint64_t evicted = 99;
  EXPECT_FALSE(sut->evict_oldest(evicted)) << "empty";
  for (std::uint64_t v = 1; v <= 3; ++v) {
    ASSERT_TRUE(sut->try_push(v));
  }
  EXPECT_FALSE(sut->evict_oldest(evicted)) << "room for one more";
  EXPECT_EQ(evicted, 99U) << "nothing written to out";
  EXPECT_EQ(pop_all_contended(*sut), (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(SpscRing, EvictOldestRefusesOnceTheConsumerMadeRoom) {
  auto sut = make_ring(4);
  for (std::uint64_t v = 1; v <= 4; ++v) {
    ASSERT_TRUE(sut->try_push(v));
  }
  EXPECT_EQ(sut->fill_estimate(), 4U);
  std::uint64_t out = 0;
  ASSERT_TRUE(sut->try_pop_contended(out));
  EXPECT_EQ(out, 1U);
  // The producer's cached view still says full; evict_oldest() reads the
  // consumer's index and finds room instead of evicting entry 2.
  std::uint64_t evicted = 0;
  EXPECT_FALSE(sut->evict_oldest(evicted));
  EXPECT_EQ(sut->fill_estimate(), 3U) << "the refreshed view";
  ASSERT_TRUE(sut->try_push(5));
  EXPECT_EQ(pop_all_contended(*sut), (std::vector<std::uint64_t>{2, 3, 4, 5}));
}

TEST(SpscRing, TryPopContendedPopsInPushOrderAndReportsEmpty) {
  auto sut = make_ring(8);
  std::uint64_t out = 0;
  EXPECT_FALSE(sut->try_pop_contended(out));
  for (std::uint64_t v = 10; v < 15; ++v) {
    ASSERT_TRUE(sut->try_push(v));
  }
  EXPECT_EQ(pop_all_contended(*sut), (std::vector<std::uint64_t>{10, 11, 12, 13, 14}));
  EXPECT_FALSE(sut->has_entry());
  EXPECT_EQ(sut->refresh_fill(), 0U);
}

TEST(SpscRing, KeepsTheNewestLimitEntriesWhenEveryPushOfAFullRingEvicts) {
  auto sut = make_ring(3);
  std::vector<std::uint64_t> evicted;
  for (std::uint64_t v = 0; v < 100; ++v) {  // many wrap-arounds of 8 slots
    while (!sut->try_push(v)) {
      std::uint64_t out = 0;
      ASSERT_TRUE(sut->evict_oldest(out)) << "a full ring with no consumer always gives up its oldest";
      evicted.push_back(out);
    }
  }
  ASSERT_EQ(evicted.size(), 97U);
  for (std::uint64_t i = 0; i < evicted.size(); ++i) {
    EXPECT_EQ(evicted[i], i) << "evicted oldest first";
  }
  EXPECT_EQ(sut->fill_estimate(), 3U);
  EXPECT_EQ(pop_all_contended(*sut), (std::vector<std::uint64_t>{97, 98, 99}));
}

TEST(SpscRing, PlainAndContendedPopsShareTheirIndex) {
  auto sut = make_ring(4);
  for (std::uint64_t v = 1; v <= 4; ++v) {
    ASSERT_TRUE(sut->try_push(v));
  }
  std::uint64_t out = 0;
  ASSERT_TRUE(sut->try_pop(out));
  EXPECT_EQ(out, 1U);
  ASSERT_TRUE(sut->try_pop_contended(out));
  EXPECT_EQ(out, 2U);
  ASSERT_TRUE(sut->try_push(5));
  ASSERT_TRUE(sut->try_push(6));
  std::uint64_t evicted = 0;
  ASSERT_TRUE(sut->evict_oldest(evicted));
  EXPECT_EQ(evicted, 3U);
  EXPECT_EQ(pop_all_contended(*sut), (std::vector<std::uint64_t>{4, 5, 6}));
}

/// An entry of several words, each derived from one value: a torn copy (some
/// words of one entry, some of another) does not check out.
struct alignas(8) Wide {
  std::uint64_t value = 0;
  std::uint64_t times = 0;
  std::uint64_t inverted = 0;
  std::uint64_t mixed = 0;
  static Wide of(std::uint64_t v) { return {v, v * 0x9E3779B97F4A7C15ULL, ~v, v ^ 0xC2B2AE3D27D4EB4FULL}; }
  [[nodiscard]] bool intact() const {
    return times == value * 0x9E3779B97F4A7C15ULL && inverted == ~value && mixed == (value ^ 0xC2B2AE3D27D4EB4FULL);
  }
};

/// A producer that evicts whenever the ring is full races a consumer that
/// pops: every value is popped exactly once or evicted exactly once, never
/// both, never torn, and each side sees its values in order.
template <std::uint32_t kCapacity, std::uint32_t kLimit>
void race_eviction_against_pops(std::uint64_t count, bool paced) {
  auto sut = std::make_unique<SpscRing<Wide, kCapacity>>();
  sut->reset(kLimit);
  std::vector<std::uint64_t> evicted;
  evicted.reserve(count);
  std::atomic<bool> producer_done{false};
  std::uint64_t torn_evictions = 0;
  std::atomic<bool> consumer_ready{false};
  std::thread producer([&] {
    while (!consumer_ready.load(std::memory_order_acquire)) {
      std::this_thread::yield();
    }
    std::uint32_t random = 12345;
    for (std::uint64_t v = 1; v <= count; ++v) {
      // An uneven pace, so that the ring is sometimes full (evictions) and
      // sometimes not (pops), and the two meet at the oldest entry often.
      random = random * 1664525U + 1013904223U;
      for (std::uint32_t spin = paced ? random >> 25 : 0; spin != 0; --spin) {
        asm volatile("" ::: "memory");  // a delay the compiler keeps
      }
      const Wide entry = Wide::of(v);
      while (!sut->try_push(entry)) {
        if (paced && (random & 0x300U) == 0) {
          std::this_thread::yield();  // now and then, let a consumer on this core catch up
        }
        Wide out;
        if (sut->evict_oldest(out)) {
          torn_evictions += out.intact() ? 0 : 1;
          evicted.push_back(out.value);
        }
      }
    }
    producer_done.store(true, std::memory_order_release);
  });
  std::vector<std::uint64_t> popped;
  popped.reserve(count);
  std::uint64_t torn = 0;
  consumer_ready.store(true, std::memory_order_release);
  for (;;) {
    Wide out;
    if (sut->try_pop_contended(out)) {
      torn += out.intact() ? 0 : 1;
      popped.push_back(out.value);
      continue;
    }
    if (producer_done.load(std::memory_order_acquire)) {
      // Whatever was pushed last is visible now.
      while (sut->try_pop_contended(out)) {
        torn += out.intact() ? 0 : 1;
        popped.push_back(out.value);
      }
      break;
    }
    std::this_thread::yield();  // two cores: let the producer run
  }
  producer.join();

  EXPECT_EQ(torn, 0U);
  EXPECT_EQ(torn_evictions, 0U);
  EXPECT_EQ(popped.size() + evicted.size(), count);
  std::vector<std::uint32_t> seen(count + 1, 0);
  for (std::uint64_t v : popped) {
    ASSERT_TRUE(v >= 1 && v <= count) << v;
    ++seen[v];
  }
  for (std::uint64_t v : evicted) {
    ASSERT_TRUE(v >= 1 && v <= count) << v;
    ++seen[v];
  }
  std::uint64_t lost_or_twice = 0;
  for (std::uint64_t v = 1; v <= count; ++v) {
    if (seen[v] != 1) {
      ADD_FAILURE_AT(__FILE__, __LINE__) << "value " << v << " was popped or evicted " << seen[v] << " times";
      if (++lost_or_twice == 10) {
        break;
      }
    }
  }
  for (std::size_t i = 1; i < popped.size(); ++i) {
    ASSERT_LT(popped[i - 1], popped[i]) << "popped out of order at " << i;
  }
  for (std::size_t i = 1; i < evicted.size(); ++i) {
    ASSERT_LT(evicted[i - 1], evicted[i]) << "evicted out of order at " << i;
  }
  EXPECT_FALSE(evicted.empty()) << "the producer never evicted: the test proved little";
  std::cout << "[          ] capacity " << kCapacity << ", limit " << kLimit << (paced ? ", paced" : ", flooding")
            << ": " << popped.size() << " popped, " << evicted.size() << " evicted\n";
}

// Paced: the ring is sometimes full, sometimes not, so both sides win often.
TEST(SpscRing, EvictionRacingPopsHandsEachEntryToExactlyOneSide) { race_eviction_against_pops<8, 4>(200'000, true); }

TEST(SpscRing, EvictionRacingPopsOnAMailboxOfOneHandsEachEntryToExactlyOneSide) {
  race_eviction_against_pops<8, 1>(200'000, true);
}

// Flooding: the ring is always full, every pop races an eviction of the same
// entry, and a slot is rewritten as soon as its entry is evicted.
TEST(SpscRing, EvictionFloodRacingPopsOfAFullRingNeverDuplicatesOrTearsAnEntry) {
  race_eviction_against_pops<4, 4>(200'000, false);
  race_eviction_against_pops<1, 1>(200'000, false);
}

/// Spins (then yields) until `flag` reaches `value`.
void await(const std::atomic<std::uint64_t>& flag, std::uint64_t value) {
  for (std::uint32_t spins = 0; flag.load(std::memory_order_acquire) < value; ++spins) {
    if (spins > 1000) {
      std::this_thread::yield();
    }
  }
}

// Lockstep: each round starts with a full ring, then the producer evicts and
// the consumer pops at the same moment, both aiming at the oldest entry.
TEST(SpscRing, EvictionAndPopStartedTogetherNeverBothTakeTheOldestEntry) {
  constexpr std::uint64_t kRounds = 20'000;
  constexpr std::uint32_t kLimit = 4;
  auto sut = std::make_unique<SpscRing<Wide, kLimit>>();
  sut->reset(kLimit);
  std::atomic<std::uint64_t> go{0};        // round the producer started
  std::atomic<std::uint64_t> consumed{0};  // rounds the consumer finished
  std::vector<std::uint64_t> evicted;
  std::vector<std::uint64_t> popped;
  std::uint64_t torn_popped = 0;   // consumer thread only
  std::uint64_t torn_evicted = 0;  // producer (this) thread only
  std::thread consumer([&] {
    for (std::uint64_t round = 1; round <= kRounds; ++round) {
      await(go, round);
      Wide out;
      if (sut->try_pop_contended(out)) {
        torn_popped += out.intact() ? 0 : 1;
        popped.push_back(out.value);
      }
      consumed.store(round, std::memory_order_release);
    }
  });
  std::uint64_t next = 1;
  std::uint32_t random = 12345;
  for (std::uint64_t round = 1; round <= kRounds; ++round) {
    while (sut->try_push(Wide::of(next))) {
      ++next;
    }
    go.store(round, std::memory_order_release);
    // The consumer sees `go` a cache-line transfer later: a varying delay
    // makes the two operations overlap in some of the rounds.
    random = random * 1664525U + 1013904223U;
    for (std::uint32_t spin = random >> 22; spin != 0; --spin) {
      asm volatile("" ::: "memory");  // a delay the compiler keeps
    }
    Wide out;
    if (sut->evict_oldest(out)) {
      torn_evicted += out.intact() ? 0 : 1;
      evicted.push_back(out.value);
    }
    await(consumed, round);
  }
  consumer.join();
  for (Wide out; sut->try_pop_contended(out);) {
    popped.push_back(out.value);
  }

  EXPECT_EQ(torn_popped + torn_evicted, 0U);
  EXPECT_EQ(popped.size() + evicted.size(), next - 1) << "an entry was taken by both sides, or by neither";
  std::vector<std::uint8_t> seen(next, 0);
  std::uint64_t twice = 0;
  for (const auto* side : {&popped, &evicted}) {
    for (std::uint64_t v : *side) {
      ASSERT_TRUE(v >= 1 && v < next) << v;
      twice += seen[v]++ != 0 ? 1 : 0;
    }
  }
  EXPECT_EQ(twice, 0U) << "entries both popped and evicted";
  for (std::size_t i = 1; i < popped.size(); ++i) {
    ASSERT_LT(popped[i - 1], popped[i]) << "popped out of order at " << i;
  }
  std::cout << "[          ] " << popped.size() << " popped, " << evicted.size() << " evicted\n";
}

// Rings whose slots are ranges of one area (a pool's queue slots).
struct SharedArea {
  std::vector<RingSlot<std::uint64_t>> storage = std::vector<RingSlot<std::uint64_t>>(16);
  [[nodiscard]] RingSlots<std::uint64_t> slots() { return {storage.data(), storage.size()}; }
};

TEST(SharedSpscRing, RingsOnNeighbouringRangesOfOneAreaKeepTheirOwnEntries) {
  SharedArea area;
  SharedSpscRing<std::uint64_t> first;
  SharedSpscRing<std::uint64_t> second;
  first.reset(area.slots(), 0, 4, 4);
  second.reset(area.slots(), 4, 8, 5);
  for (std::uint64_t v = 0; v < 4; ++v) {
    ASSERT_TRUE(first.try_push(area.slots(), 100 + v));
  }
  for (std::uint64_t v = 0; v < 5; ++v) {
    ASSERT_TRUE(second.try_push(area.slots(), 200 + v));
  }

  EXPECT_FALSE(first.try_push(area.slots(), 999)) << "its limit is its capacity, 4";
  EXPECT_FALSE(second.try_push(area.slots(), 999)) << "its limit is 5 of its 8 slots";
  for (std::uint64_t v = 0; v < 4; ++v) {
    std::uint64_t out = 0;
    ASSERT_TRUE(first.try_pop(area.slots(), out));
    EXPECT_EQ(out, 100 + v);
  }
  for (std::uint64_t v = 0; v < 5; ++v) {
    std::uint64_t out = 0;
    ASSERT_TRUE(second.try_pop(area.slots(), out));
    EXPECT_EQ(out, 200 + v);
  }
  EXPECT_EQ(first.first_slot(), 0U);
  EXPECT_EQ(second.capacity(), 8U);
}

TEST(SharedSpscRing, ARangeOutsideTheAreaLooksFullToTheProducerAndEmptyToTheConsumer) {
  // Another process wrote the range: the area is this process's own view.
  SharedArea area;
  SharedSpscRing<std::uint64_t> sut;
  sut.reset(area.slots(), 12, 8, 8);  // slots 12..19 of 16

  std::uint64_t out = 0;
  EXPECT_FALSE(sut.producer_range_fits(area.slots()));
  EXPECT_FALSE(sut.try_push(area.slots(), 1));
  EXPECT_FALSE(sut.evict_oldest(area.slots(), out));
  EXPECT_FALSE(sut.try_pop(area.slots(), out));
  EXPECT_FALSE(sut.try_pop_contended(area.slots(), out));
  EXPECT_FALSE(sut.has_entry(area.slots()));
  for (const auto& slot : area.storage) {
    EXPECT_EQ(slot.turn.load(), 0U) << "nothing outside or inside the area was written";
  }
}

}  // namespace
}  // namespace axon::shm
