// Design experiments for the shared-memory data path: the round trip of one
// message between two pinned threads (two cores) through different
// hand-offs, from the bare cache line up to axon's ring + pool protocol, next
// to alternatives the library does not use (yet). Threads move cache lines
// between cores exactly as processes do, so these figures explain
// axon-bench's process-to-process ones (docs/performance.md, "Where the time
// goes").
//
// Time per iteration is the one-way time: each thread's iteration is one
// round trip, and google-benchmark divides the elapsed time by the
// iterations of both threads (two hand-offs per round trip).
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <ctime>

#include "bench/micro/heap_pool.hpp"
#include "bench/micro/thread_pinning.hpp"
#include "src/base/cpu_relax.hpp"
#include "transports/shm/chunk_header.hpp"
#include "transports/shm/spsc_ring.hpp"

namespace {

using axon::bench::HeapPool;
using axon::bench::pin_thread;
using axon::shm::ChunkHeader;
using axon::shm::ChunkPool;
using axon::shm::kCacheLine;
using axon::shm::kLoanBit;
using Ring = axon::shm::SpscRing<std::uint64_t, 256>;

constexpr std::uint32_t kSlots = 1024;

inline std::int64_t now_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// The floor: each side writes its own line and spins on the other's.
void BM_Handoff_CacheLine(benchmark::State& state) {
  struct Lines {
    alignas(kCacheLine) std::atomic<std::uint64_t> ping{0};
    alignas(kCacheLine) std::atomic<std::uint64_t> pong{0};
  };
  static Lines lines;
  pin_thread(state);
  if (state.thread_index() == 0) {
    lines.ping.store(0);
    lines.pong.store(0);
  }
  std::uint64_t i = 0;
  for (auto _ : state) {
    ++i;
    if (state.thread_index() == 0) {
      lines.ping.store(i, std::memory_order_release);
      while (lines.pong.load(std::memory_order_acquire) != i) {
        axon::cpu_relax();
      }
    } else {
      while (lines.ping.load(std::memory_order_acquire) != i) {
        axon::cpu_relax();
      }
      lines.pong.store(i, std::memory_order_release);
    }
  }
}
BENCHMARK(BM_Handoff_CacheLine)->Threads(2)->UseRealTime();

/// axon's SpscRing: the consumer reads the producer's index line, then the
/// slot line (two transfers per message).
void BM_Handoff_SpscRing(benchmark::State& state) {
  alignas(kCacheLine) static Ring ping;
  alignas(kCacheLine) static Ring pong;
  pin_thread(state);
  const bool first = state.thread_index() == 0;
  if (first) {
    ping.reset(kSlots);
    pong.reset(kSlots);
  }
  Ring& out = first ? ping : pong;
  Ring& in = first ? pong : ping;
  std::uint64_t value = 0;
  for (auto _ : state) {
    if (first) {
      out.try_push(value);
    }
    while (!in.try_pop(value)) {
      axon::cpu_relax();
    }
    if (!first) {
      out.try_push(value);
    }
  }
}
BENCHMARK(BM_Handoff_SpscRing)->Threads(2)->UseRealTime();

/// Alternative ring: each slot carries its sequence number next to the value
/// (Vyukov's bounded queue, folly's turn sequencer), so the consumer polls
/// the slot itself: one transfer per message.
struct SequencedSlot {
  alignas(kCacheLine) std::atomic<std::uint64_t> word{0};  ///< sequence << 32 | value
};
struct SequencedRing {
  SequencedSlot slots[kSlots];
  void push(std::uint64_t sequence, std::uint32_t value) noexcept {
    slots[sequence % kSlots].word.store(sequence << 32 | value, std::memory_order_release);
  }
  std::uint32_t pop(std::uint64_t sequence) noexcept {
    for (;;) {
      const std::uint64_t word = slots[sequence % kSlots].word.load(std::memory_order_acquire);
      if (word >> 32 == sequence) {
        return static_cast<std::uint32_t>(word);
      }
      axon::cpu_relax();
    }
  }
  void reset() noexcept {
    for (auto& slot : slots) {
      slot.word.store(0, std::memory_order_relaxed);
    }
  }
};

void BM_Handoff_SequencedSlots(benchmark::State& state) {
  static SequencedRing ping;
  static SequencedRing pong;
  pin_thread(state);
  const bool first = state.thread_index() == 0;
  if (first) {
    ping.reset();
    pong.reset();
  }
  std::uint64_t sequence = 0;
  for (auto _ : state) {
    ++sequence;
    if (first) {
      ping.push(sequence, 7);
      benchmark::DoNotOptimize(pong.pop(sequence));
    } else {
      pong.push(sequence, ping.pop(sequence));
    }
  }
}
BENCHMARK(BM_Handoff_SequencedSlots)->Threads(2)->UseRealTime();

/// axon's protocol without the API: the sender allocates from its pool
/// (ChunkPool), fills the header and a 16-byte stamp, sets the subscriber's
/// holder bit, pushes the offset (SpscRing) and drops its loan bit; the
/// receiver pops, reads header and stamp, drops its bit (which returns the
/// chunk to the sender's shared free list). Each direction has its own pool,
/// as two nodes do.
void BM_Handoff_RingAndPool(benchmark::State& state) {
  alignas(kCacheLine) static Ring ping;
  alignas(kCacheLine) static Ring pong;
  static HeapPool ping_pool({{.payload_bytes = 64, .count = 64}});
  static HeapPool pong_pool({{.payload_bytes = 64, .count = 64}});
  pin_thread(state);
  const bool first = state.thread_index() == 0;
  if (first) {
    ping.reset(kSlots);
    pong.reset(kSlots);
  }
  auto send = [](ChunkPool& pool, Ring& ring, std::uint64_t i) {
    ChunkHeader* chunk = pool.allocate(64);
    chunk->publish_time_ns.store(static_cast<std::int64_t>(i), std::memory_order_relaxed);
    std::memcpy(pool.payload(chunk), &i, sizeof(i));
    chunk->holders.fetch_or(1, std::memory_order_release);
    ring.try_push(pool.offset_of(chunk));
    pool.drop_holders(chunk, kLoanBit);
  };
  auto receive = [](ChunkPool& pool, Ring& ring) {
    std::uint64_t offset = 0;
    while (!ring.try_pop(offset)) {
      axon::cpu_relax();
    }
    ChunkHeader* chunk = pool.chunk_at(offset);
    std::uint64_t stamp = 0;
    std::memcpy(&stamp, pool.payload(chunk), sizeof(stamp));
    benchmark::DoNotOptimize(stamp +
                             static_cast<std::uint64_t>(chunk->publish_time_ns.load(std::memory_order_relaxed)));
    pool.drop_holders(chunk, 1);
  };
  std::uint64_t i = 0;
  for (auto _ : state) {
    ++i;
    if (first) {
      send(ping_pool.pool(), ping, i);
      receive(pong_pool.pool(), pong);
    } else {
      receive(ping_pool.pool(), ping);
      send(pong_pool.pool(), pong, i);
    }
  }
}
BENCHMARK(BM_Handoff_RingAndPool)->Threads(2)->UseRealTime();

/// Alternative protocol: sequenced slots, a compact chunk whose header and
/// first payload bytes share one line, and chunks recycled by their sender
/// (the receiver only clears its holder word; the sender reuses a chunk once
/// it reads zero) instead of a free list both sides write. Arg 1 adds a
/// clock_gettime per send, as publish() stamps publish_time_ns.
struct CompactChunk {
  alignas(kCacheLine) std::atomic<std::uint64_t> holders{0};
  std::uint64_t sequence = 0;
  std::int64_t publish_time_ns = 0;
  std::uint32_t payload_bytes = 0;
  std::byte payload[kCacheLine - 28];  // the start of the payload: the stamp fits
};
static_assert(sizeof(CompactChunk) == kCacheLine);

void BM_Handoff_SequencedSlotsAndSenderRecycling(benchmark::State& state) {
  static SequencedRing ping;
  static SequencedRing pong;
  static CompactChunk ping_chunks[64];
  static CompactChunk pong_chunks[64];
  pin_thread(state);
  const bool first = state.thread_index() == 0;
  const bool stamp_time = state.range(0) != 0;
  if (first) {
    ping.reset();
    pong.reset();
    for (int k = 0; k < 64; ++k) {
      ping_chunks[k].holders.store(0);
      pong_chunks[k].holders.store(0);
    }
  }
  auto send = [stamp_time](CompactChunk* chunks, SequencedRing& ring, std::uint64_t i) {
    const auto index = static_cast<std::uint32_t>(i % 64);
    CompactChunk& chunk = chunks[index];
    while (chunk.holders.load(std::memory_order_acquire) != 0) {  // pairs with the receiver's release
      axon::cpu_relax();
    }
    chunk.sequence = i;
    chunk.publish_time_ns = stamp_time ? now_ns() : 0;
    chunk.payload_bytes = 64;
    std::memcpy(chunk.payload, &i, sizeof(i));
    chunk.holders.store(1, std::memory_order_relaxed);  // published by the slot's release store
    ring.push(i, index);
  };
  auto receive = [](CompactChunk* chunks, SequencedRing& ring, std::uint64_t i) {
    CompactChunk& chunk = chunks[ring.pop(i)];
    std::uint64_t stamp = 0;
    std::memcpy(&stamp, chunk.payload, sizeof(stamp));
    benchmark::DoNotOptimize(stamp + chunk.sequence);
    chunk.holders.store(0, std::memory_order_release);
  };
  std::uint64_t i = 0;
  for (auto _ : state) {
    ++i;
    if (first) {
      send(ping_chunks, ping, i);
      receive(pong_chunks, pong, i);
    } else {
      receive(ping_chunks, ping, i);
      send(pong_chunks, pong, i);
    }
  }
}
BENCHMARK(BM_Handoff_SequencedSlotsAndSenderRecycling)->ArgName("stamp")->Arg(0)->Arg(1)->Threads(2)->UseRealTime();

}  // namespace

// Run: build/<dir>/bench/handoff_bench   (threads pin themselves to the first two allowed CPUs)
// Results and the machine: docs/performance.md.
