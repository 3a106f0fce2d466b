// Latency statistics over every recorded sample (no sampling): percentiles
// by nearest rank on the sorted samples, and a compact log-spaced histogram
// of the same samples for the plots of the HTML report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace axon_bench {

/// Log-spaced histogram buckets per decade: 40 gives buckets 6 % wide,
/// fine enough to tell 0.90 from 0.95 µs and compact (a few hundred buckets
/// from 10 ns to 10 s at most, only non-empty ones are kept).
inline constexpr int kHistogramBucketsPerDecade = 40;

/// One histogram bucket: `count` samples in [lower_ns, upper_ns).
struct HistogramBucket {
  double lower_ns = 0;
  double upper_ns = 0;
  std::uint64_t count = 0;
};

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
  /// Non-empty buckets in ascending order (bucket k covers
  /// [10^(k/40), 10^((k+1)/40)) ns; values below 1 ns go to [0, 1)).
  std::vector<HistogramBucket> histogram;

  /// Every figure multiplied by `factor` (0.5 turns round trips into one-way
  /// times; percentiles commute with a positive factor).
  [[nodiscard]] LatencySummary scaled(double factor) const noexcept;
};

/// The log-spaced histogram of `sorted` (ascending).
std::vector<HistogramBucket> log_histogram(std::span<const std::int64_t> sorted);

/// Summarises `samples_ns`, sorting it in place. Empty input gives a zero
/// summary with samples == 0.
LatencySummary summarize(std::span<std::int64_t> samples_ns);

/// The value of rank ceil(fraction * n) (1-based) in `sorted`, which must be
/// non-empty and ascending.
std::int64_t percentile(std::span<const std::int64_t> sorted, double fraction) noexcept;

}  // namespace axon_bench
