// The replay's timing error (actual publish time - deadline), collected per message and summed up as
// percentiles at the end (docs/performance.md, "Replay timing (issue 18)").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace axon::tools {

struct TimingSummary {
  std::size_t samples = 0;
  std::int64_t p50_ns = 0;
  std::int64_t p99_ns = 0;
  std::int64_t p999_ns = 0;
  std::int64_t max_ns = 0;
};

/// Thread safety: none. add() allocates only when more samples come than reserved.
class TimingStats {
 public:
  void reserve(std::size_t samples) { errors_ns_.reserve(samples); }
  void add(std::int64_t error_ns) { errors_ns_.push_back(error_ns); }
  /// Nearest-rank percentiles of what was added (zeros when nothing was). Sorts a copy.
  [[nodiscard]] TimingSummary summary() const;

 private:
  std::vector<std::int64_t> errors_ns_;
};

}  // namespace axon::tools
