#include "src/tools/axon/play/timing_stats.hpp"

#include <algorithm>
#include <cmath>

namespace axon::tools {

TimingSummary TimingStats::summary() const {
  TimingSummary out;
  out.samples = errors_ns_.size();
  if (errors_ns_.empty()) {
    return out;
  }
  std::vector<std::int64_t> sorted = errors_ns_;
  std::sort(sorted.begin(), sorted.end());
  const auto rank = [&](double p) {
    const auto at = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(at, 1, sorted.size()) - 1];
  };
  out.p50_ns = rank(0.50);
  out.p99_ns = rank(0.99);
  out.p999_ns = rank(0.999);
  out.max_ns = sorted.back();
  return out;
}

}  // namespace axon::tools
