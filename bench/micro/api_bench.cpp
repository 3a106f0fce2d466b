// Micro benchmarks of the typed API on the shared-memory transport, one
// process and one thread: the software cost of loan -> publish -> take ->
// release with every cache line local (no core-to-core transfer). The
// difference to pool_bench + ring_bench is what the API and the ports add.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>

#include <axon/axon.hpp>

namespace {

struct Message64 {
  std::byte data[64];
};

/// A node with one publisher and one connected subscriber of Message64, in a
/// domain of its own.
struct Loopback {
  std::shared_ptr<axon::Node> node;
  std::shared_ptr<axon::Publisher<Message64>> pub;
  std::shared_ptr<axon::Subscriber<Message64>> sub;

  static Loopback create(benchmark::State& state) {
    Loopback l;
    axon::NodeOptions options;
    options.domain_id = 0x7000'0000U | static_cast<std::uint32_t>(::getpid() & 0xFFFFFF);
    options.chunk_classes = {{.payload_bytes = 256, .count = 256}};
    auto node = axon::Node::create("api_bench", options);
    if (!node) {
      state.SkipWithError(std::string(node.error().message()).c_str());
      return l;
    }
    l.node = *node;
    auto pub = l.node->advertise<Message64>("api_bench/loopback");
    auto sub = l.node->subscribe<Message64>("api_bench/loopback");
    if (!pub || !sub) {
      state.SkipWithError("advertise or subscribe failed");
      return l;
    }
    l.pub = *pub;
    l.sub = *sub;
    while (l.sub->publisher_count() == 0 || l.pub->subscriber_count() == 0) {
      ::usleep(1000);
    }
    return l;
  }
};

/// take() with nothing queued: one iteration of a busy-poll loop.
void BM_Api_TakeEmpty(benchmark::State& state) {
  auto l = Loopback::create(state);
  if (!l.sub) {
    return;
  }
  for (auto _ : state) {
    auto sample = l.sub->take();
    benchmark::DoNotOptimize(sample);
  }
}
BENCHMARK(BM_Api_TakeEmpty);

/// loan, write 16 bytes, publish, take, read them, drop the sample.
void BM_Api_LoanPublishTakeRelease(benchmark::State& state) {
  auto l = Loopback::create(state);
  if (!l.sub) {
    return;
  }
  std::uint64_t i = 0;
  for (auto _ : state) {
    auto loan = l.pub->loan();
    std::memcpy(loan->data, &i, sizeof(i));
    auto status = l.pub->publish(std::move(*loan));
    benchmark::DoNotOptimize(status);
    auto sample = l.sub->take();
    std::memcpy(&i, sample->data, sizeof(i));
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Api_LoanPublishTakeRelease);

/// The parts: loan() then dropping the loan unpublished.
void BM_Api_LoanDiscard(benchmark::State& state) {
  auto l = Loopback::create(state);
  if (!l.sub) {
    return;
  }
  for (auto _ : state) {
    auto loan = l.pub->loan();
    benchmark::DoNotOptimize(loan);
  }
}
BENCHMARK(BM_Api_LoanDiscard);

}  // namespace

// Run: taskset -c 0 build/<dir>/bench/api_bench   (or: cmake --build <dir> --target bench-micro)
// Results and the machine: docs/performance.md.
