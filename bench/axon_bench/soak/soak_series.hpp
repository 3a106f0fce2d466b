// The series a soak samples: one value per sample time for each (process,
// metric) and each pool class and registry table of the domain. Storage for
// every sample of the run is allocated and written when a series is made, so
// that axon-bench's own memory, which the soak samples too, does not grow as
// the run fills it.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "soak/soak_check.hpp"

namespace axon_bench {

struct SoakSeries {
  std::string process;  ///< A component, "axon-bench", or "domain" (registry) / the node (pool).
  std::string metric;   ///< "rss_kib", "fds", "maps", "shm_maps", "threads", "pool_free_chunks", "registry_slots".
  std::string detail;   ///< Pool: the class ("2 MiB"); registry: the table ("topics"); else empty.
  SoakRule rule = SoakRule::kNoGrowth;
  std::vector<double> values;  ///< Per sample; NaN where it was not read (the process gone, a pool unreadable).
  SoakVerdict verdict;

  /// "rss_kib perception", "pool_free_chunks camera_driver 2 MiB".
  [[nodiscard]] std::string name() const { return metric + " " + process + (detail.empty() ? "" : " " + detail); }
};

/// All series of a run. Not thread-safe: the parent's sampling loop owns it.
class SoakSeriesSet {
 public:
  /// Room for `capacity` samples; later samples are dropped (the run's
  /// length fixes how many there are).
  explicit SoakSeriesSet(std::size_t capacity) : times_s_(capacity, 0.0) {}

  /// Starts sample `count()` at `t_s`. Returns false when there is no room.
  bool begin_sample(double t_s) {
    if (count_ >= times_s_.size()) {
      return false;
    }
    times_s_[count_++] = t_s;
    return true;
  }

  /// Sets the current sample of the series (process, metric, detail),
  /// making it on first use (allocates then, and only then).
  void set(const std::string& process, const std::string& metric, const std::string& detail, SoakRule rule,
           double value) {
    if (count_ == 0) {
      return;
    }
    auto [it, made] = index_.try_emplace(process + '\n' + metric + '\n' + detail, series_.size());
    if (made) {
      series_.push_back({process,
                         metric,
                         detail,
                         rule,
                         std::vector<double>(times_s_.size(), std::numeric_limits<double>::quiet_NaN()),
                         {}});
    }
    series_[it->second].values[count_ - 1] = value;
  }

  [[nodiscard]] std::size_t count() const noexcept { return count_; }
  /// The sample times so far.
  [[nodiscard]] std::span<const double> times_s() const noexcept { return {times_s_.data(), count_}; }
  /// The values of `s` so far.
  [[nodiscard]] std::span<const double> values_of(const SoakSeries& s) const noexcept {
    return {s.values.data(), count_};
  }
  [[nodiscard]] std::vector<SoakSeries>& series() noexcept { return series_; }
  [[nodiscard]] const std::vector<SoakSeries>& series() const noexcept { return series_; }

 private:
  std::vector<double> times_s_;
  std::size_t count_ = 0;
  std::vector<SoakSeries> series_;
  std::map<std::string, std::size_t> index_;
};

}  // namespace axon_bench
