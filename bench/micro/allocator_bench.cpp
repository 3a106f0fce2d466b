// Micro benchmarks of axon::PoolAllocator (over an axon::BlockPool) next to
// std::allocator (glibc malloc) in the same run: one node's allocate and free,
// a std::list's push and pop, a std::map's insert and erase. Each case is a
// template run once with each allocator, so the pairs read side by side.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "axon/pool_allocator.hpp"
#include "bench/micro/thread_pinning.hpp"

namespace {

/// A 48-byte message node, as a small sensor sample or command would be.
struct Node48 {
  std::uint64_t words[6];
};

std::shared_ptr<axon::BlockPool>& pool() {
  static std::shared_ptr<axon::BlockPool> shared = [] {
    auto made = axon::BlockPool::create({.name = "bench", .classes = {{.block_bytes = 64, .blocks = 1 << 16}}});
    if (!made) {
      throw std::runtime_error(std::string(made.error().message()));
    }
    return *made;
  }();
  return shared;
}

template <class T>
struct Pooled {
  static axon::PoolAllocator<T> make() { return axon::PoolAllocator<T>(pool()); }
};
template <class T>
struct Malloc {
  static std::allocator<T> make() { return {}; }
};

/// allocate(1) then deallocate(1) of one node: the free list's pop and push
/// against malloc's thread cache.
template <template <class> class Source>
void BM_Alloc_OneNode(benchmark::State& state) {
  auto sut = Source<Node48>::make();
  for (auto _ : state) {
    Node48* node = sut.allocate(1);
    benchmark::DoNotOptimize(node);
    sut.deallocate(node, 1);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Alloc_OneNode<Malloc>)->Name("BM_Alloc_OneNode/std_allocator");
BENCHMARK(BM_Alloc_OneNode<Pooled>)->Name("BM_Alloc_OneNode/pool_allocator");

/// The same from every benchmark thread at once (pinned): the pool's head
/// line bounces between the cores; malloc keeps per-thread caches.
template <template <class> class Source>
void BM_Alloc_OneNodeContended(benchmark::State& state) {
  axon::bench::pin_thread(state);
  auto sut = Source<Node48>::make();
  for (auto _ : state) {
    Node48* node = sut.allocate(1);
    benchmark::DoNotOptimize(node);
    sut.deallocate(node, 1);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Alloc_OneNodeContended<Malloc>)
    ->Name("BM_Alloc_OneNodeContended/std_allocator")
    ->Threads(2)
    ->UseRealTime();
BENCHMARK(BM_Alloc_OneNodeContended<Pooled>)
    ->Name("BM_Alloc_OneNodeContended/pool_allocator")
    ->Threads(2)
    ->UseRealTime();

/// A queue of state.range(0) messages: push_back one, pop_front one.
template <template <class> class Source>
void BM_Alloc_ListPushPop(benchmark::State& state) {
  std::list<Node48, decltype(Source<Node48>::make())> sut(Source<Node48>::make());
  for (std::int64_t i = 0; i < state.range(0); ++i) {
    sut.push_back({});
  }
  for (auto _ : state) {
    sut.push_back({});
    sut.pop_front();
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Alloc_ListPushPop<Malloc>)->Name("BM_Alloc_ListPushPop/std_allocator")->Arg(16)->Arg(4096);
BENCHMARK(BM_Alloc_ListPushPop<Pooled>)->Name("BM_Alloc_ListPushPop/pool_allocator")->Arg(16)->Arg(4096);

/// A map of state.range(0) keys: insert a new key, erase the oldest.
template <template <class> class Source>
void BM_Alloc_MapInsertErase(benchmark::State& state) {
  using Value = std::pair<const std::uint64_t, std::uint64_t>;
  std::map<std::uint64_t, std::uint64_t, std::less<>, decltype(Source<Value>::make())> sut(Source<Value>::make());
  std::uint64_t next = 0;
  for (; next < static_cast<std::uint64_t>(state.range(0)); ++next) {
    sut.emplace(next, next);
  }
  for (auto _ : state) {
    sut.emplace(next, next);
    sut.erase(next - static_cast<std::uint64_t>(state.range(0)));
    ++next;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Alloc_MapInsertErase<Malloc>)->Name("BM_Alloc_MapInsertErase/std_allocator")->Arg(16)->Arg(4096);
BENCHMARK(BM_Alloc_MapInsertErase<Pooled>)->Name("BM_Alloc_MapInsertErase/pool_allocator")->Arg(16)->Arg(4096);

}  // namespace

// Run: build/<dir>/bench/allocator_bench (about 15 s; the two-thread cases pin to the first two allowed CPUs), or
// cmake --build <dir> --target bench-micro. Results and the machine: docs/performance.md.
