// BlockPool: option checks, class choice, exhaustion, stats, foreign
// pointers, and many threads allocating from one pool (run under TSan).
#include "axon/block_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace axon {
namespace {

std::shared_ptr<BlockPool> make_pool(std::vector<BlockClass> classes, bool fall_through = true) {
  auto pool = BlockPool::create({.name = "test_pool", .classes = std::move(classes), .fall_through = fall_through});
  EXPECT_TRUE(pool.ok()) << pool.error().message();
  return *pool;
}

std::string error_of(BlockPoolOptions options) {
  auto pool = BlockPool::create(std::move(options));
  EXPECT_FALSE(pool.ok());
  return pool.ok() ? std::string() : std::string(pool.error().message());
}

TEST(BlockPool, RefusesOptionsThatCannotMakeAPoolAndSaysWhatToChange) {
  EXPECT_NE(error_of({.name = "", .classes = {{64, 4}}}).find("name is empty"), std::string::npos);
  EXPECT_NE(error_of({.name = "p", .classes = {}}).find("'p': has 0 classes"), std::string::npos);
  EXPECT_NE(error_of({.name = "p", .classes = {{0, 4}}}).find("block_bytes must be"), std::string::npos);
  EXPECT_NE(error_of({.name = "p", .classes = {{64, 0}}}).find("blocks must be"), std::string::npos);
  EXPECT_NE(error_of({.name = "p", .classes = {{60, 4}, {64, 2}}}).find("merge them"), std::string::npos);
  EXPECT_EQ(BlockPool::create({.name = "p", .classes = {{64, 0}}}).error().code(), ErrorCode::kInvalidArgument);
}

TEST(BlockPool, ServesTheSmallestClassThatFitsAndAlignsItsBlocks) {
  auto sut = make_pool({{256, 2}, {24, 2}, {64, 2}});
  void* small = sut->try_allocate(20, 8);
  void* medium = sut->try_allocate(33, 64);
  void* large = sut->try_allocate(200, 16);
  const auto stats = sut->stats();
  ASSERT_EQ(stats.classes.size(), 3U);
  EXPECT_EQ(stats.classes[0].block_bytes, 32U);  // 24 rounds up to 16-byte steps
  EXPECT_EQ(stats.classes[0].in_use, 1U);
  EXPECT_EQ(stats.classes[1].in_use, 1U);
  EXPECT_EQ(stats.classes[2].in_use, 1U);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(medium) % 64, 0U);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small) % 32, 0U);
  for (void* p : {small, medium, large}) {
    EXPECT_TRUE(sut->owns(p));
    sut->deallocate(p);
  }
  EXPECT_EQ(sut->stats().classes[0].in_use, 0U);
}

TEST(BlockPool, RefusesARequestNoClassFitsInsteadOfGivingLess) {
  auto sut = make_pool({{64, 2}});
  EXPECT_EQ(sut->try_allocate(65, 8), nullptr);
  EXPECT_EQ(sut->try_allocate(16, 128), nullptr);  // more alignment than any block has
  EXPECT_EQ(sut->stats().refused_too_large, 2U);
  try {
    sut->throw_refusal(65, 8);
    FAIL() << "throw_refusal() returned";
  } catch (const BlockPoolExhausted& e) {
    EXPECT_EQ(e.refusal(), BlockRefusal::kTooLarge);
    EXPECT_NE(std::string(e.what()).find("'test_pool': no class fits 65 bytes"), std::string::npos) << e.what();
  }
}

TEST(BlockPool, FallsThroughToALargerClassOnlyWhenAllowed) {
  auto falls = make_pool({{32, 1}, {128, 1}});
  void* first = falls->try_allocate(16, 8);
  void* second = falls->try_allocate(16, 8);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(falls->stats().classes[1].in_use, 1U);
  EXPECT_EQ(falls->try_allocate(16, 8), nullptr);
  EXPECT_EQ(falls->stats().classes[0].refused, 2U);
  falls->deallocate(first);
  falls->deallocate(second);

  auto strict = make_pool({{32, 1}, {128, 1}}, /*fall_through=*/false);
  void* only = strict->try_allocate(16, 8);
  EXPECT_EQ(strict->try_allocate(16, 8), nullptr);
  EXPECT_EQ(strict->stats().classes[1].in_use, 0U);
  strict->deallocate(only);
}

TEST(BlockPool, ExhaustionIsCountedAndExplainedWithThePoolName) {
  auto sut = make_pool({{64, 2}});
  void* a = sut->try_allocate(64, 8);
  void* b = sut->try_allocate(64, 8);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(sut->try_allocate(64, 8), nullptr);
  const auto stats = sut->stats();
  EXPECT_EQ(stats.name, "test_pool");
  EXPECT_EQ(stats.classes[0].refused, 1U);
  EXPECT_EQ(stats.classes[0].high_water, 2U);
  try {
    sut->throw_refusal(64, 8);
    FAIL() << "throw_refusal() returned";
  } catch (const std::bad_alloc& e) {
    EXPECT_NE(std::string(e.what()).find("'test_pool': no free block for 64 bytes (class of 64 bytes: 2 of 2 in use"),
              std::string::npos)
        << e.what();
  }
  sut->deallocate(b);
  EXPECT_EQ(sut->try_allocate(64, 8), b) << "the block given back is the next one served";
  sut->deallocate(a);
  sut->deallocate(b);
}

TEST(BlockPool, ForeignOrMisalignedPointerAbortsWithAMessage) {
  auto sut = make_pool({{64, 2}});
  int on_stack = 0;
  EXPECT_FALSE(sut->owns(&on_stack));
  EXPECT_DEATH(sut->deallocate(&on_stack), "not a block of this pool");
  auto* block = static_cast<std::byte*>(sut->try_allocate(64, 8));
  EXPECT_FALSE(sut->owns(block + 8));
  EXPECT_DEATH(sut->deallocate(block + 8), "not a block of this pool");
  sut->deallocate(block);
}

// Every thread takes blocks, writes its id into them, checks them and gives
// them back; a block served twice at once (a broken free list, ABA) shows as
// a foreign id, and TSan sees the data race.
TEST(BlockPool, ManyThreadsNeverGetTheSameBlockAtOnce) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 100'000;
  constexpr int kHeld = 8;
  auto sut = make_pool({{64, kThreads * kHeld / 2}, {128, kThreads * kHeld}});
  std::atomic<int> mismatches{0};
  std::atomic<int> refused{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1, std::memory_order_relaxed);
      while (ready.load(std::memory_order_relaxed) < kThreads) {
        std::this_thread::yield();  // start together, so the threads overlap as much as the cores allow
      }
      std::vector<std::uint64_t*> held;
      for (int round = 0; round < kRounds; ++round) {
        while (held.size() < kHeld) {
          auto* block = static_cast<std::uint64_t*>(sut->try_allocate(64, 8));
          if (block == nullptr) {
            refused.fetch_add(1, std::memory_order_relaxed);
            break;
          }
          std::fill(block, block + 8, static_cast<std::uint64_t>(t));
          held.push_back(block);
        }
        for (std::uint64_t* block : held) {
          if (std::any_of(block, block + 8, [t](std::uint64_t v) { return v != static_cast<std::uint64_t>(t); })) {
            mismatches.fetch_add(1, std::memory_order_relaxed);
          }
          sut->deallocate(block);
        }
        held.clear();
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(refused.load(), 0) << "both classes together hold every thread's blocks";
  const auto stats = sut->stats();
  EXPECT_EQ(stats.classes[0].in_use + stats.classes[1].in_use, 0U);
  // Every block is on a free list exactly once: all of them can be taken again, each once.
  std::set<void*> all;
  while (void* block = sut->try_allocate(64, 8)) {
    EXPECT_TRUE(all.insert(block).second);
  }
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kThreads * kHeld / 2 + kThreads * kHeld));
  for (void* block : all) {
    sut->deallocate(block);
  }
}

}  // namespace
}  // namespace axon
