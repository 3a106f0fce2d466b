// Latencies of a long scenario run kept per time window in a fixed-size
// log histogram instead of one slot per message: a soak run of hours would
// otherwise need hundreds of megabytes, and memory that grows as it is
// written would look like the leak the soak looks for. The buckets are the
// ones stats.hpp's histograms use (40 per decade), so a percentile read from
// them is the upper edge of a bucket 6 % wide; the maximum is exact.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "stats/stats.hpp"

namespace axon_bench {

/// Buckets from 1 ns to 10 s (10 decades); longer latencies go to the last.
inline constexpr int kWindowLatencyBuckets = 10 * kHistogramBucketsPerDecade;

/// One subscription's latencies in one window. Written by the subscribing
/// component only, read by the parent after waitpid() (which orders it).
struct WindowLatency {
  std::uint64_t count;
  std::int64_t max_ns;
  std::uint64_t buckets[kWindowLatencyBuckets];

  /// Counts one latency. Negative values (clocks a few ns apart) count as 0.
  void add(std::int64_t latency_ns) noexcept {
    ++count;
    max_ns = std::max(max_ns, latency_ns);
    buckets[bucket_of(latency_ns)] += 1;
  }

  /// The bucket of `ns`: k covers [10^(k/40), 10^((k+1)/40)) ns; below 1 ns is bucket 0.
  static std::size_t bucket_of(std::int64_t ns) noexcept {
    if (ns <= 1) {
      return 0;
    }
    const double k = std::floor(std::log10(static_cast<double>(ns)) * kHistogramBucketsPerDecade);
    return static_cast<std::size_t>(std::clamp(k, 0.0, double{kWindowLatencyBuckets - 1}));
  }
  /// The upper edge of bucket `k` in ns.
  static double upper_edge_ns(std::size_t k) noexcept {
    return std::pow(10.0, static_cast<double>(k + 1) / kHistogramBucketsPerDecade);
  }
};

/// Percentiles of the sum of some windows' histograms (one topic's
/// subscribers, or all topics).
struct WindowPercentiles {
  std::uint64_t count = 0;
  double p50_ns = 0;
  double p99_ns = 0;
  double p999_ns = 0;
  double max_ns = 0;
};

/// The percentiles of the sum of `windows`: each the upper edge of the bucket
/// holding that rank (nearest rank, as stats.hpp), capped at the exact max.
/// Counts come from another process: a sum that disagrees with `count` is
/// read as what the buckets hold.
inline WindowPercentiles window_percentiles(std::span<const WindowLatency* const> windows) {
  std::uint64_t sum[kWindowLatencyBuckets] = {};
  WindowPercentiles out;
  for (const WindowLatency* w : windows) {
    for (std::size_t k = 0; k < kWindowLatencyBuckets; ++k) {
      sum[k] += w->buckets[k];
      out.count += w->buckets[k];
    }
    out.max_ns = std::max(out.max_ns, static_cast<double>(w->max_ns));
  }
  auto at = [&](double fraction) {
    const auto rank = static_cast<std::uint64_t>(std::ceil(fraction * static_cast<double>(out.count)));
    std::uint64_t seen = 0;
    for (std::size_t k = 0; k < kWindowLatencyBuckets; ++k) {
      seen += sum[k];
      if (seen >= std::max<std::uint64_t>(rank, 1)) {
        return std::min(WindowLatency::upper_edge_ns(k), out.max_ns);
      }
    }
    return out.max_ns;
  };
  if (out.count > 0) {
    out.p50_ns = at(0.5);
    out.p99_ns = at(0.99);
    out.p999_ns = at(0.999);
  }
  return out;
}

}  // namespace axon_bench
