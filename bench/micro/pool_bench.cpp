// Micro benchmarks of transports/shm/chunk_pool: what a publisher's loan
// (allocate) and the last holder's release (drop_holders) cost.
#include <benchmark/benchmark.h>

#include <atomic>

#include "bench/micro/heap_pool.hpp"
#include "bench/micro/thread_pinning.hpp"
#include "src/base/cpu_relax.hpp"
#include "transports/shm/chunk_header.hpp"
#include "transports/shm/spsc_ring.hpp"

namespace {

using axon::bench::HeapPool;
using axon::shm::ChunkHeader;
using axon::shm::kLoanBit;

/// allocate() then drop_holders(kLoanBit), as an unpublished loan does, on
/// one thread: the uncontended cost of the free list's two CAS.
void BM_Pool_AllocateRelease(benchmark::State& state) {
  HeapPool heap({{.payload_bytes = 256, .count = 1024}});
  auto& sut = heap.pool();
  for (auto _ : state) {
    ChunkHeader* chunk = sut.allocate(64);
    benchmark::DoNotOptimize(chunk);
    sut.drop_holders(chunk, kLoanBit);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Pool_AllocateRelease);

/// The same with the node's default classes (256 B .. 16 MiB), asking for
/// state.range(0) bytes: allocate() scans the classes below the one that fits.
void BM_Pool_AllocateReleaseDefaultClasses(benchmark::State& state) {
  HeapPool heap(axon::default_chunk_classes());
  auto& sut = heap.pool();
  const auto bytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    ChunkHeader* chunk = sut.allocate(bytes);
    benchmark::DoNotOptimize(chunk);
    sut.drop_holders(chunk, kLoanBit);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Pool_AllocateReleaseDefaultClasses)->Arg(64)->Arg(64 << 10)->Arg(4 << 20);

HeapPool& shared_pool() {
  static HeapPool pool({{.payload_bytes = 256, .count = 1024}});
  return pool;
}

/// allocate + release of one pool by every benchmark thread at once: the
/// free-list head's cache line bounces between the cores.
void BM_Pool_AllocateReleaseContended(benchmark::State& state) {
  auto& sut = shared_pool().pool();
  axon::bench::pin_thread(state);
  for (auto _ : state) {
    ChunkHeader* chunk = sut.allocate(64);
    if (chunk == nullptr) {
      state.SkipWithError("pool exhausted");
      break;
    }
    benchmark::DoNotOptimize(chunk);
    sut.drop_holders(chunk, kLoanBit);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Pool_AllocateReleaseContended)->Threads(1)->Threads(2)->UseRealTime();

/// The data path's pattern: thread 0 allocates and passes the chunk's
/// offset through an SPSC ring, thread 1 pops it and releases it (as a
/// publisher and its subscriber do). Per item: allocate, push, pop, release.
/// Read items_per_second; "Time" divides by the iterations of both threads.
axon::shm::SpscRing<std::uint64_t, 256>& handoff_ring() {
  alignas(axon::shm::kCacheLine) static axon::shm::SpscRing<std::uint64_t, 256> ring;
  return ring;
}

void BM_Pool_AllocateOnOneThreadReleaseOnAnother(benchmark::State& state) {
  auto& sut = shared_pool().pool();
  auto& ring = handoff_ring();
  axon::bench::pin_thread(state);
  if (state.thread_index() == 0) {
    for (auto _ : state) {
      ChunkHeader* chunk = nullptr;
      while ((chunk = sut.allocate(64)) == nullptr) {
        axon::cpu_relax();  // the consumer holds every chunk: wait for one
      }
      chunk->holders.store(1, std::memory_order_relaxed);  // hand our loan to "connection 0"; published by the push
      while (!ring.try_push(sut.offset_of(chunk))) {
        axon::cpu_relax();
      }
    }
  } else {
    for (auto _ : state) {
      std::uint64_t offset = 0;
      while (!ring.try_pop(offset)) {
        axon::cpu_relax();
      }
      sut.drop_holders(sut.chunk_at(offset), 1);
    }
  }
  if (state.thread_index() == 0) {
    state.SetItemsProcessed(state.iterations());  // once: each chunk makes one trip
  }
}
BENCHMARK(BM_Pool_AllocateOnOneThreadReleaseOnAnother)->Threads(2)->UseRealTime();

}  // namespace

// Run: build/<dir>/bench/pool_bench (two-thread cases pin to the first two allowed CPUs)   (or: cmake --build <dir>
// --target bench-micro) Results and the machine: docs/performance.md.
