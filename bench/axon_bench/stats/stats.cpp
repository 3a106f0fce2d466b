#include "stats/stats.hpp"

#include <algorithm>
#include <cmath>

namespace axon_bench {

LatencySummary LatencySummary::scaled(double factor) const noexcept {
  LatencySummary s = *this;
  for (double* v :
       {&s.mean_ns, &s.stddev_ns, &s.min_ns, &s.p50_ns, &s.p90_ns, &s.p99_ns, &s.p999_ns, &s.p9999_ns, &s.max_ns}) {
    *v *= factor;
  }
  for (auto& bucket : s.histogram) {
    bucket.lower_ns *= factor;
    bucket.upper_ns *= factor;
  }
  return s;
}

std::int64_t percentile(std::span<const std::int64_t> sorted, double fraction) noexcept {
  const auto n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::size_t>(std::ceil(fraction * n));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

std::vector<HistogramBucket> log_histogram(std::span<const std::int64_t> sorted) {
  std::vector<HistogramBucket> buckets;
  constexpr double kPerDecade = kHistogramBucketsPerDecade;
  auto edge = [](long k) { return std::pow(10.0, static_cast<double>(k) / kPerDecade); };
  long current = -1;  // -1: the [0, 1) bucket
  for (const auto v : sorted) {
    long k = -1;
    if (v >= 1) {
      k = static_cast<long>(std::floor(std::log10(static_cast<double>(v)) * kPerDecade));
      // Rounding of log10 near an edge: keep the value inside [edge(k), edge(k+1)).
      while (k > 0 && static_cast<double>(v) < edge(k)) {
        --k;
      }
      while (static_cast<double>(v) >= edge(k + 1)) {
        ++k;
      }
    }
    if (buckets.empty() || k != current) {
      current = k;
      buckets.push_back(k < 0 ? HistogramBucket{0.0, 1.0, 0} : HistogramBucket{edge(k), edge(k + 1), 0});
    }
    ++buckets.back().count;
  }
  return buckets;
}

LatencySummary summarize(std::span<std::int64_t> samples_ns) {
  LatencySummary s;
  s.samples = samples_ns.size();
  if (samples_ns.empty()) {
    return s;
  }
  std::sort(samples_ns.begin(), samples_ns.end());
  // Two passes (mean, then squared deviations) keep the variance exact
  // enough for millions of samples.
  double sum = 0;
  for (const auto v : samples_ns) {
    sum += static_cast<double>(v);
  }
  s.mean_ns = sum / static_cast<double>(s.samples);
  double squares = 0;
  for (const auto v : samples_ns) {
    const double d = static_cast<double>(v) - s.mean_ns;
    squares += d * d;
  }
  s.stddev_ns = s.samples > 1 ? std::sqrt(squares / static_cast<double>(s.samples - 1)) : 0.0;
  const std::span<const std::int64_t> sorted = samples_ns;
  s.min_ns = static_cast<double>(sorted.front());
  s.p50_ns = static_cast<double>(percentile(sorted, 0.50));
  s.p90_ns = static_cast<double>(percentile(sorted, 0.90));
  s.p99_ns = static_cast<double>(percentile(sorted, 0.99));
  s.p999_ns = static_cast<double>(percentile(sorted, 0.999));
  s.p9999_ns = static_cast<double>(percentile(sorted, 0.9999));
  s.max_ns = static_cast<double>(sorted.back());
  s.histogram = log_histogram(sorted);
  return s;
}

}  // namespace axon_bench
