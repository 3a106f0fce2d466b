#include "transports/shm/spsc_ring.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <thread>

namespace axon::shm {
namespace {

using Ring = SpscRing<8>;

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
  EXPECT_TRUE(sut->full());
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
  EXPECT_EQ(sut->size(), 3U);
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
  auto sut = std::make_unique<SpscRing<1024>>();
  sut->reset(1024);
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
  EXPECT_EQ(sut->size(), 0U);
}

TEST(SpscRing, KeepsProducerAndConsumerIndicesOnSeparateCacheLines) {
  // The layout itself is the point: the two sides must not false-share.
  struct Probe {
    SpscRing<8> ring;
  };
  EXPECT_EQ(alignof(SpscRing<8>), kCacheLine);
  EXPECT_GE(sizeof(Probe), 3 * kCacheLine);
}

}  // namespace
}  // namespace axon::shm
