// Micro benchmarks of transports/shm/spsc_ring: the queue between one
// publisher and one subscriber.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "bench/micro/thread_pinning.hpp"
#include "src/base/cpu_relax.hpp"
#include "transports/shm/spsc_ring.hpp"

namespace {

using Ring = axon::shm::SpscRing<std::uint64_t, 256>;

/// try_push then try_pop on one thread: the ring's own instruction cost,
/// every line in the local cache.
void BM_Ring_PushPopSameThread(benchmark::State& state) {
  alignas(axon::shm::kCacheLine) static Ring sut;
  std::uint64_t value = 0;
  for (auto _ : state) {
    sut.try_push(value);
    sut.try_pop(value);
    benchmark::DoNotOptimize(value);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Ring_PushPopSameThread);

/// Thread 0 pushes, thread 1 pops, as fast as they can: throughput with the
/// index caching of a streaming producer and consumer. Read items_per_second
/// (values moved); "Time" divides by the iterations of both threads.
void BM_Ring_ProducerConsumer(benchmark::State& state) {
  alignas(axon::shm::kCacheLine) static Ring sut;
  axon::bench::pin_thread(state);
  std::uint64_t value = 0;
  if (state.thread_index() == 0) {
    for (auto _ : state) {
      while (!sut.try_push(value)) {
        axon::cpu_relax();
      }
      ++value;
    }
  } else {
    for (auto _ : state) {
      while (!sut.try_pop(value)) {
        axon::cpu_relax();
      }
      benchmark::DoNotOptimize(value);
    }
  }
  if (state.thread_index() == 0) {
    state.SetItemsProcessed(state.iterations());  // once: each value is pushed once and popped once
  }
}
BENCHMARK(BM_Ring_ProducerConsumer)->Threads(2)->UseRealTime();

/// Thread 0 pushes to ring a and waits for the answer on ring b; thread 1
/// echoes. Each thread's iteration is a round trip; google-benchmark divides
/// the time by the iterations of both threads, so "Time" is the one-way
/// time (compare with axon-bench's figures; handoff_bench has the rest).
void BM_Ring_RoundTrip(benchmark::State& state) {
  alignas(axon::shm::kCacheLine) static Ring ping;
  alignas(axon::shm::kCacheLine) static Ring pong;
  axon::bench::pin_thread(state);
  std::uint64_t value = 0;
  Ring& out = state.thread_index() == 0 ? ping : pong;
  Ring& in = state.thread_index() == 0 ? pong : ping;
  const bool starts = state.thread_index() == 0;
  for (auto _ : state) {
    if (starts) {
      out.try_push(value);
    }
    while (!in.try_pop(value)) {
      axon::cpu_relax();
    }
    if (!starts) {
      out.try_push(value);
    }
  }
}
BENCHMARK(BM_Ring_RoundTrip)->Threads(2)->UseRealTime();

}  // namespace

// Run: build/<dir>/bench/ring_bench (two-thread cases pin to the first two allowed CPUs)   (or: cmake --build <dir>
// --target bench-micro) Results and the machine: docs/performance.md.
