// A container over a PoolAllocator never touches the heap once built: the
// counting operator new and malloc of this executable
// (tests/support/allocation_hooks.cpp) see no call.
#include <gtest/gtest.h>

#include <list>
#include <map>
#include <memory>

#include "axon/pool_allocator.hpp"
#include "tests/support/allocation_hooks.hpp"

namespace axon {
namespace {

namespace allocations = test::allocations;

TEST(PoolAllocatorAllocations, ListMapAndAllocateSharedDoNotAllocateFromTheHeap) {
  auto pool = *BlockPool::create({.name = "no_heap", .classes = {{64, 512}}});
  std::list<int, PoolAllocator<int>> list{PoolAllocator<int>(pool)};
  using MapAlloc = PoolAllocator<std::pair<const int, int>>;
  std::map<int, int, std::less<>, MapAlloc> map{MapAlloc(pool)};
  const PoolAllocator<double> shared_alloc(pool);

  allocations::start();
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 100; ++i) {
      list.push_back(i);
      map.emplace(i, i);
    }
    auto shared = std::allocate_shared<double>(shared_alloc, 1.5);
    list.clear();
    map.clear();
  }
  const std::uint64_t counted = allocations::stop();
  if (allocations::kCounted) {
    EXPECT_EQ(counted, 0U);
  }
  EXPECT_EQ(pool->stats().classes[0].high_water, 201U);
}

}  // namespace
}  // namespace axon
