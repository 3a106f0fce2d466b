#include "transports/shm/spsc_ring.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <thread>

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

}  // namespace
}  // namespace axon::shm
