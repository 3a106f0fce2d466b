#include "transports/shm/chunk_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "tests/support/heap_pool.hpp"

namespace axon::shm {
namespace {

using test::PoolFixture;

TEST(ChunkPool, RejectsClassesThatDoNotGrow) {
  std::vector<ChunkClassConfig> classes{{.payload_bytes = 512, .count = 1}, {.payload_bytes = 256, .count = 1}};
  auto sut = ChunkPool::bytes_needed(classes);
  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(sut.error().message().find("grow"), std::string_view::npos);
}

TEST(ChunkPool, RejectsAnEmptyOrZeroSizedClass) {
  EXPECT_FALSE(ChunkPool::bytes_needed({}).ok());
  std::vector<ChunkClassConfig> zero{{.payload_bytes = 0, .count = 4}};
  EXPECT_FALSE(ChunkPool::bytes_needed(zero).ok());
}

TEST(ChunkPool, HandsOutEveryChunkOnceThenReportsExhaustion) {
  PoolFixture f({{.payload_bytes = 100, .count = 16}});
  std::set<ChunkHeader*> seen;
  for (int i = 0; i < 16; ++i) {
    ChunkHeader* c = f.pool.allocate(100);
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(seen.insert(c).second) << "chunk handed out twice";
    EXPECT_EQ(c->holders.load(), kLoanBit);
    EXPECT_EQ(c->capacity_bytes, 128U) << "payload capacity rounds up to a cache line";
  }
  EXPECT_EQ(f.pool.allocate(1), nullptr);
  EXPECT_EQ(f.pool.free_chunks(0), 0U);
}

TEST(ChunkPool, PicksTheSmallestFittingClassAndFallsBackToLargerOnes) {
  PoolFixture f({{.payload_bytes = 256, .count = 1}, {.payload_bytes = 4096, .count = 2}});
  ChunkHeader* small = f.pool.allocate(200);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->size_class, 0);
  ChunkHeader* fallback = f.pool.allocate(200);
  ASSERT_NE(fallback, nullptr);
  EXPECT_EQ(fallback->size_class, 1) << "an empty class borrows from the next larger one";
  EXPECT_EQ(f.pool.allocate(5000), nullptr) << "nothing fits 5000 bytes";
}

TEST(ChunkPool, FallsThroughAtMostTheClassesItsPolicyAllows) {
  PoolFixture f(
      {{.payload_bytes = 256, .count = 1}, {.payload_bytes = 4096, .count = 1}, {.payload_bytes = 65536, .count = 1}});
  const ChunkFallback one_class{.max_classes = 1, .max_ratio = 0};
  ASSERT_NE(f.pool.allocate(200, one_class), nullptr);
  ChunkHeader* next = f.pool.allocate(200, one_class);
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next->size_class, 1);

  EXPECT_EQ(f.pool.allocate(200, one_class), nullptr) << "the 64 KiB class is two classes up";
  EXPECT_EQ(f.pool.allocate(200, {.max_classes = 2, .max_ratio = 16}), nullptr) << "64 KiB is 256x a 256 B chunk";
  ChunkHeader* unbounded = f.pool.allocate(200, {.max_classes = 2, .max_ratio = 0});
  ASSERT_NE(unbounded, nullptr);
  EXPECT_EQ(unbounded->size_class, 2);
}

TEST(ChunkPool, ANoFallbackPolicyKeepsALoanInItsOwnClass) {
  PoolFixture f({{.payload_bytes = 256, .count = 1}, {.payload_bytes = 512, .count = 1}});
  const ChunkFallback none{.max_classes = 0, .max_ratio = 0};
  ASSERT_NE(f.pool.allocate(1, none), nullptr);

  EXPECT_EQ(f.pool.allocate(1, none), nullptr);
  EXPECT_NE(f.pool.allocate(300, none), nullptr) << "a message of the larger class still gets its own";
  const ChunkPool::ClassRange range = f.pool.classes_for(1, {.max_classes = 1, .max_ratio = 2});
  EXPECT_EQ(range.first, 0U);
  EXPECT_EQ(range.last, 1U);
}

TEST(ChunkPool, PayloadsAreCacheLineAlignedAndDoNotOverlap) {
  PoolFixture f({{.payload_bytes = 64, .count = 4}, {.payload_bytes = 1000, .count = 4}});
  std::vector<ChunkHeader*> chunks;
  while (ChunkHeader* c = f.pool.allocate(1)) {
    chunks.push_back(c);
  }
  ASSERT_EQ(chunks.size(), 8U);
  for (ChunkHeader* c : chunks) {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.pool.payload(c)) % kCacheLine, 0U);
    for (ChunkHeader* d : chunks) {
      if (c != d) {
        const std::byte* a = f.pool.payload(c);
        const std::byte* b = reinterpret_cast<std::byte*>(d);
        EXPECT_TRUE(a + c->capacity_bytes <= b || b + sizeof(ChunkHeader) + d->capacity_bytes <= a);
      }
    }
  }
}

TEST(ChunkPool, LastHolderToDropReturnsTheChunk) {
  PoolFixture f({{.payload_bytes = 64, .count = 1}});
  ChunkHeader* c = f.pool.allocate(64);
  ASSERT_NE(c, nullptr);
  c->holders.fetch_or(0b101);
  EXPECT_FALSE(f.pool.drop_holders(c, kLoanBit));
  EXPECT_FALSE(f.pool.drop_holders(c, 0b001));
  EXPECT_EQ(f.pool.allocate(64), nullptr);
  EXPECT_TRUE(f.pool.drop_holders(c, 0b100));
  EXPECT_EQ(f.pool.allocate(64), c);
}

TEST(ChunkPool, DroppingTheSameHolderTwiceFreesOnlyOnce) {
  PoolFixture f({{.payload_bytes = 64, .count = 2}});
  ChunkHeader* c = f.pool.allocate(64);
  c->holders.fetch_or(0b1);
  EXPECT_FALSE(f.pool.drop_holders(c, kLoanBit));
  EXPECT_TRUE(f.pool.drop_holders(c, 0b1));
  EXPECT_FALSE(f.pool.drop_holders(c, 0b1)) << "a crash-recovery retry must not free twice";
  EXPECT_EQ(f.pool.free_chunks(0), 2U);
}

TEST(ChunkPool, ChunkAtRejectsOffsetsThatAreNotChunkStarts) {
  PoolFixture f({{.payload_bytes = 64, .count = 4}});
  ChunkHeader* c = f.pool.allocate(64);
  const std::uint64_t offset = f.pool.offset_of(c);
  EXPECT_EQ(f.pool.chunk_at(offset), c);
  EXPECT_EQ(f.pool.chunk_at(offset + 8), nullptr);
  EXPECT_EQ(f.pool.chunk_at(0), nullptr);
  EXPECT_EQ(f.pool.chunk_at(~std::uint64_t{0}), nullptr);
}

TEST(ChunkPool, AttachSeesTheSameChunksAndRejectsCorruption) {
  PoolFixture f({{.payload_bytes = 64, .count = 4}});
  auto view = ChunkPool::attach(f.base(), f.bytes());
  ASSERT_TRUE(view.ok());
  ChunkHeader* c = view->allocate(64);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(f.pool.free_chunks(0), 3U);
  EXPECT_FALSE(ChunkPool::attach(f.base(), 16).ok());
  reinterpret_cast<PoolDirectory*>(f.base())->class_count = 99;
  EXPECT_FALSE(ChunkPool::attach(f.base(), f.bytes()).ok());
}

TEST(ChunkPool, SurvivesAMultiThreadedAllocateReleaseStorm) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 50'000;
  PoolFixture f({{.payload_bytes = 64, .count = 8}, {.payload_bytes = 256, .count = 8}});
  // Every chunk carries an owner marker in its payload: two owners at once
  // would mean the free list handed a chunk out twice.
  std::atomic<int> double_owned{0};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<ChunkHeader*> mine;
      for (int i = 0; i < kRounds; ++i) {
        if (ChunkHeader* c = f.pool.allocate(i % 2 == 0 ? 64 : 200)) {
          auto* owner = reinterpret_cast<std::atomic<int>*>(f.pool.payload(c));
          int expected = 0;
          if (!owner->compare_exchange_strong(expected, t + 1)) {
            double_owned.fetch_add(1);
          }
          mine.push_back(c);
        }
        if (mine.size() > 3 || (i % 3 == 0 && !mine.empty())) {
          ChunkHeader* c = mine.back();
          mine.pop_back();
          reinterpret_cast<std::atomic<int>*>(f.pool.payload(c))->store(0);
          EXPECT_TRUE(f.pool.drop_holders(c, kLoanBit));
        }
      }
      for (ChunkHeader* c : mine) {
        reinterpret_cast<std::atomic<int>*>(f.pool.payload(c))->store(0);
        f.pool.drop_holders(c, kLoanBit);
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  EXPECT_EQ(double_owned.load(), 0);
  EXPECT_EQ(f.pool.free_chunks(0), 8U);
  EXPECT_EQ(f.pool.free_chunks(1), 8U);
  // And the free lists still hold exactly every chunk once.
  std::set<ChunkHeader*> all;
  while (ChunkHeader* c = f.pool.allocate(1)) {
    EXPECT_TRUE(all.insert(c).second);
  }
  EXPECT_EQ(all.size(), 16U);
}

}  // namespace
}  // namespace axon::shm
