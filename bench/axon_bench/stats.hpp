// Latency statistics over every recorded sample (no histogram buckets, no
// sampling): percentiles by nearest rank on the sorted samples.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace axon_bench {

/// Summary of one case's latencies, in nanoseconds. Warm-up samples are
/// never passed in: callers record only the measured phase.
struct LatencySummary {
  std::size_t samples = 0;
  double mean_ns = 0;
  double stddev_ns = 0;  ///< Sample standard deviation (n - 1).
  double min_ns = 0;
  double p50_ns = 0;
  double p90_ns = 0;
  double p99_ns = 0;
  double p999_ns = 0;
  double p9999_ns = 0;
  double max_ns = 0;

  /// Every figure multiplied by `factor` (0.5 turns round trips into one-way
  /// times; percentiles commute with a positive factor).
  [[nodiscard]] LatencySummary scaled(double factor) const noexcept;
};

/// Summarises `samples_ns`, sorting it in place. Empty input gives a zero
/// summary with samples == 0.
LatencySummary summarize(std::span<std::int64_t> samples_ns);

/// The value of rank ceil(fraction * n) (1-based) in `sorted`, which must be
/// non-empty and ascending.
std::int64_t percentile(std::span<const std::int64_t> sorted, double fraction) noexcept;

}  // namespace axon_bench
