#include "src/tools/axon/topic/window_stats.hpp"

#include <algorithm>
#include <cmath>

namespace axon::tools {

WindowStats::WindowStats(std::size_t window) : window_(std::max<std::size_t>(window, 2)) {}

void WindowStats::add(std::int64_t publish_time_ns, std::uint64_t payload_bytes) {
  if (entries_.size() == window_) {
    entries_.pop_front();
  }
  entries_.push_back({publish_time_ns, payload_bytes});
  ++total_messages_;
  total_bytes_ += payload_bytes;
}

WindowFigures WindowStats::figures() const {
  WindowFigures f;
  f.messages = entries_.size();
  if (entries_.empty()) {
    return f;
  }
  std::uint64_t bytes = 0;
  f.size_min_bytes = entries_.front().bytes;
  for (const Entry& e : entries_) {
    bytes += e.bytes;
    f.size_min_bytes = std::min(f.size_min_bytes, e.bytes);
    f.size_max_bytes = std::max(f.size_max_bytes, e.bytes);
  }
  f.size_mean_bytes = static_cast<double>(bytes) / static_cast<double>(entries_.size());
  if (entries_.size() < 2) {
    return f;
  }
  const double span_s = static_cast<double>(entries_.back().time_ns - entries_.front().time_ns) * 1e-9;
  const auto periods = static_cast<double>(entries_.size() - 1);
  f.period_mean_s = span_s / periods;
  f.period_min_s = INFINITY;
  double squares = 0;
  for (std::size_t i = 1; i < entries_.size(); ++i) {
    const double period = static_cast<double>(entries_[i].time_ns - entries_[i - 1].time_ns) * 1e-9;
    f.period_min_s = std::min(f.period_min_s, period);
    f.period_max_s = std::max(f.period_max_s, period);
    squares += (period - f.period_mean_s) * (period - f.period_mean_s);
  }
  f.period_std_s = std::sqrt(squares / periods);
  if (span_s > 0) {
    f.rate_hz = periods / span_s;
    f.bytes_per_s = static_cast<double>(bytes - entries_.front().bytes) / span_s;
  }
  return f;
}

}  // namespace axon::tools
