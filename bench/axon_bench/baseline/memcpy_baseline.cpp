#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "baseline/baselines.hpp"
#include "harness/pair_runner.hpp"
#include "results/table.hpp"

namespace axon_bench {
namespace {

/// Restores the calling thread's CPU affinity when it goes out of scope.
class AffinityGuard {
 public:
  AffinityGuard() { ::sched_getaffinity(0, sizeof(saved_), &saved_); }
  ~AffinityGuard() { ::sched_setaffinity(0, sizeof(saved_), &saved_); }
  AffinityGuard(const AffinityGuard&) = delete;
  AffinityGuard& operator=(const AffinityGuard&) = delete;

 private:
  cpu_set_t saved_{};
};

CaseResult measure_one_memcpy(std::uint64_t bytes) {
  const std::size_t allocated = (bytes + kCacheLine - 1) / kCacheLine * kCacheLine;
  std::unique_ptr<std::byte, decltype(&std::free)> src(
      static_cast<std::byte*>(std::aligned_alloc(kCacheLine, allocated)), &std::free);
  std::unique_ptr<std::byte, decltype(&std::free)> dst(
      static_cast<std::byte*>(std::aligned_alloc(kCacheLine, allocated)), &std::free);
  if (!src || !dst) {
    throw std::runtime_error("cannot allocate 2 x " + format_bytes(bytes) + " for the memcpy baseline");
  }
  std::memset(src.get(), 1, bytes);
  std::memset(dst.get(), 2, bytes);
  // Copies per timed batch: enough that the clock's own cost vanishes.
  const std::uint64_t per_batch = std::max<std::uint64_t>(1, (std::uint64_t{256} << 10) / bytes);
  auto batch = [&] {
    const std::int64_t start = now_ns();
    for (std::uint64_t k = 0; k < per_batch; ++k) {
      std::memcpy(dst.get(), src.get(), bytes);
      asm volatile("" : : "r"(dst.get()), "r"(src.get()) : "memory");  // keep every copy
    }
    return now_ns() - start;
  };
  for (int i = 0; i < 20; ++i) {
    batch();  // warm-up: caches, TLB, frequency
  }
  const std::int64_t one_batch_ns = std::max<std::int64_t>(1, batch());
  const auto batches = static_cast<std::size_t>(std::clamp<std::int64_t>(200'000'000 / one_batch_ns, 50, 20'000));
  std::vector<std::int64_t> per_copy_ns(batches);
  for (auto& sample : per_copy_ns) {
    sample = batch() / static_cast<std::int64_t>(per_batch);
  }
  CaseResult result;
  result.benchmark = "baseline";
  result.mode = "copy";
  result.transport = "memcpy";
  result.serializer = "none";
  result.wait_strategy = "none";
  result.payload_bytes = bytes;
  result.latency = summarize(per_copy_ns);
  result.msgs_per_s = result.latency.mean_ns > 0 ? 1e9 / result.latency.mean_ns : 0.0;
  result.mb_per_s = *result.msgs_per_s * static_cast<double>(bytes) / 1e6;
  return result;
}

}  // namespace

std::vector<CaseResult> measure_memcpy(const std::vector<std::uint64_t>& sizes, int cpu) {
  AffinityGuard restore;
  if (const std::string error = pin_to_cpu(cpu); !error.empty()) {
    throw std::runtime_error(error);
  }
  std::vector<CaseResult> results;
  for (const auto bytes : sizes) {
    if (bytes == 0) {
      throw std::invalid_argument("memcpy sizes must be at least 1 byte");
    }
    results.push_back(measure_one_memcpy(bytes));
  }
  return results;
}

void print_memcpy_table(std::FILE* out, const std::vector<CaseResult>& cases) {
  Table table({"size", "p50 ns/copy", "mean ns/copy", "p99 ns/copy", "GB/s at p50"});
  for (const auto& c : cases) {
    const double gb_per_s = c.latency.p50_ns > 0 ? static_cast<double>(c.payload_bytes) / c.latency.p50_ns : 0.0;
    table.add_row({format_bytes(c.payload_bytes), format("%.1f", c.latency.p50_ns), format("%.1f", c.latency.mean_ns),
                   format("%.1f", c.latency.p99_ns), format("%.2f", gb_per_s)});
  }
  table.print(out);
}

}  // namespace axon_bench
