// PoolAllocator in std containers and std::allocate_shared: every block
// comes from the pool and goes back, objects are built and destroyed once
// each, refusals throw a std::bad_alloc naming the pool (run under ASan).
#include "axon/pool_allocator.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace axon {
namespace {

/// Counts live objects, so a test proves that nothing leaks or dies twice.
struct Counted {
  static inline std::atomic<int> live{0};
  explicit Counted(int v) : value(v) { live.fetch_add(1, std::memory_order_relaxed); }
  Counted(const Counted& other) : value(other.value) { live.fetch_add(1, std::memory_order_relaxed); }
  Counted& operator=(const Counted&) = default;
  ~Counted() { live.fetch_sub(1, std::memory_order_relaxed); }
  int value;
  char padding[20] = {};
};

std::shared_ptr<BlockPool> make_pool(const std::string& name, std::vector<BlockClass> classes) {
  auto pool = BlockPool::create({.name = name, .classes = std::move(classes)});
  EXPECT_TRUE(pool.ok()) << pool.error().message();
  return *pool;
}

std::uint32_t in_use(const BlockPool& pool) {
  std::uint32_t sum = 0;
  for (const auto& c : pool.stats().classes) {
    sum += c.in_use;
  }
  return sum;
}

class PoolAllocatorTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_EQ(Counted::live.load(), 0) << "every object built was destroyed once";
    EXPECT_EQ(in_use(*pool), 0U) << "every block went back to the pool";
  }
  std::shared_ptr<BlockPool> pool = make_pool("containers", {{64, 256}, {1024, 16}, {16384, 4}});
};

TEST_F(PoolAllocatorTest, VectorGrowsThroughTheClassesAndRefusesBeyondTheLargest) {
  std::vector<Counted, PoolAllocator<Counted>> sut{PoolAllocator<Counted>(pool)};
  for (int i = 0; i < 500; ++i) {
    sut.emplace_back(i);
  }
  EXPECT_EQ(sut[499].value, 499);
  EXPECT_TRUE(pool->owns(sut.data()));
  EXPECT_EQ(in_use(*pool), 1U) << "one block for the whole array";
  try {
    sut.reserve(16384 / sizeof(Counted) + 1);  // n * sizeof(T) above the largest block: refused, not truncated
    FAIL() << "reserve() beyond the largest block succeeded";
  } catch (const BlockPoolExhausted& e) {
    EXPECT_EQ(e.refusal(), BlockRefusal::kTooLarge);
    EXPECT_NE(std::string(e.what()).find("'containers'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sut.size(), 500U) << "a refused reserve() leaves the vector as it was";
}

TEST_F(PoolAllocatorTest, MapAndListTakeOneBlockPerNode) {
  {
    using Alloc = PoolAllocator<std::pair<const int, Counted>>;
    std::map<int, Counted, std::less<>, Alloc> sut{Alloc(pool)};
    for (int i = 0; i < 100; ++i) {
      sut.emplace(i, Counted(i));
    }
    EXPECT_EQ(pool->stats().classes[0].in_use, 100U);
    for (int i = 0; i < 100; i += 2) {
      sut.erase(i);
    }
    EXPECT_EQ(pool->stats().classes[0].in_use, 50U);
    EXPECT_EQ(sut.at(51).value, 51);
  }
  std::list<Counted, PoolAllocator<Counted>> sut{PoolAllocator<Counted>(pool)};
  for (int i = 0; i < 200; ++i) {
    sut.emplace_back(i);
  }
  EXPECT_EQ(pool->stats().classes[0].in_use, 200U);
  sut.pop_front();
  EXPECT_EQ(sut.front().value, 1);
}

TEST_F(PoolAllocatorTest, AllocateSharedPutsObjectAndControlBlockInOneBlock) {
  auto sut = std::allocate_shared<Counted>(PoolAllocator<Counted>(pool), 7);
  EXPECT_EQ(sut->value, 7);
  EXPECT_EQ(in_use(*pool), 1U);
  std::weak_ptr<Counted> weak = sut;
  sut.reset();
  EXPECT_EQ(Counted::live.load(), 0) << "the object dies with its last shared_ptr";
  EXPECT_EQ(in_use(*pool), 1U) << "the block stays while a weak_ptr holds the control block";
  weak.reset();
}

TEST_F(PoolAllocatorTest, ExhaustionThrowsBadAllocNamingThePoolAndIsCounted) {
  auto small = make_pool("cmd_vel", {{64, 3}});
  std::list<int, PoolAllocator<int>> sut{PoolAllocator<int>(small)};
  for (int i = 0; i < 3; ++i) {
    sut.push_back(i);
  }
  try {
    sut.push_back(3);
    FAIL() << "a fourth node fit into three blocks";
  } catch (const std::bad_alloc& e) {
    EXPECT_NE(std::string(e.what()).find("'cmd_vel': no free block"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sut.size(), 3U);
  EXPECT_EQ(small->stats().classes[0].refused, 1U);
  sut.pop_back();
  sut.push_back(3);  // a block given back serves again
  EXPECT_EQ(sut.back(), 3);
}

TEST_F(PoolAllocatorTest, AllocatorsOfOnePoolAreEqualAcrossRebinding) {
  auto other = make_pool("other", {{64, 4}});
  const PoolAllocator<int> a(pool);
  const PoolAllocator<double> rebound(a);
  EXPECT_TRUE(a == rebound);
  EXPECT_TRUE(a == PoolAllocator<int>(rebound));
  EXPECT_FALSE(a == PoolAllocator<int>(other));
  using Traits = std::allocator_traits<PoolAllocator<int>>;
  static_assert(!Traits::is_always_equal::value);
  static_assert(std::is_same_v<Traits::rebind_alloc<char>, PoolAllocator<char>>);
  // Memory from one is given back through the other.
  PoolAllocator<double> copy = rebound;
  double* p = copy.allocate(4);
  PoolAllocator<double>(a).deallocate(p, 4);
}

TEST_F(PoolAllocatorTest, CopyAssignmentKeepsThePoolMoveAndSwapTakeTheOthers) {
  auto other = make_pool("other", {{64, 64}, {1024, 4}});
  using List = std::list<int, PoolAllocator<int>>;
  List mine{PoolAllocator<int>(pool)};
  List theirs({1, 2, 3}, PoolAllocator<int>(other));
  mine = theirs;
  EXPECT_EQ(&mine.get_allocator().pool(), pool.get()) << "the copy is built in the target's pool";
  EXPECT_EQ(pool->stats().classes[0].in_use, 3U);
  List moved{PoolAllocator<int>(pool)};
  moved = std::move(theirs);
  EXPECT_EQ(&moved.get_allocator().pool(), other.get()) << "move assignment takes the nodes and their pool";
  EXPECT_EQ(other->stats().classes[0].in_use, 3U);
  theirs.push_back(9);  // a moved-from container still has a usable allocator
  mine.swap(moved);
  EXPECT_EQ(&mine.get_allocator().pool(), other.get());
  EXPECT_EQ(mine.size(), 3U);
}

TEST_F(PoolAllocatorTest, ThePoolLivesAsLongAsAContainerUsesIt) {
  auto scoped = make_pool("scoped", {{64, 8}});
  std::weak_ptr<BlockPool> watch = scoped;
  auto sut = std::make_unique<std::list<int, PoolAllocator<int>>>(PoolAllocator<int>(scoped));
  sut->push_back(1);
  scoped.reset();
  EXPECT_FALSE(watch.expired());
  sut.reset();
  EXPECT_TRUE(watch.expired());
}

// Threads each fill and drain their own list from one shared pool; run under
// TSan, this checks the free list's memory orders with real containers.
TEST_F(PoolAllocatorTest, ThreadsShareOnePoolThroughTheirOwnContainers) {
  constexpr int kThreads = 4;
  auto shared = make_pool("shared", {{64, kThreads * 64}});
  std::vector<std::thread> threads;
  std::atomic<long> sum{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      std::list<int, PoolAllocator<int>> mine{PoolAllocator<int>(shared)};
      for (int round = 0; round < 2'000; ++round) {
        for (int i = 0; i < 64; ++i) {
          mine.push_back(i);
        }
        long local = 0;
        while (!mine.empty()) {
          local += mine.front();
          mine.pop_front();
        }
        sum.fetch_add(local, std::memory_order_relaxed);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(sum.load(), static_cast<long>(kThreads) * 2'000 * (63 * 64 / 2));
  EXPECT_EQ(in_use(*shared), 0U);
}

}  // namespace
}  // namespace axon
