// What a soak run produced, for the terminal, the JSON document and the HTML
// report: every sampled series with its verdict, each topic's latency per
// window with its verdict, and the run's context.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "results/result_log.hpp"
#include "scenario/window_latency.hpp"
#include "soak/soak_check.hpp"
#include "soak/soak_sampler.hpp"
#include "soak/soak_series.hpp"

namespace axon_bench {

/// One topic's latency (all its subscribers together), or all topics'.
struct SoakTopicLatency {
  std::string topic;                       ///< "all topics" for the overall figures.
  std::vector<WindowPercentiles> windows;  ///< Window w covers [w, w + 1) * window_s from the measured start.
  SoakVerdict verdict;                     ///< p99 drift.
};

struct SoakResult {
  RunInfo run;
  std::string scenario_file;
  std::string scenario_name;
  std::uint32_t domain_id = 0;
  double duration_s = 0;
  double interval_s = 0;
  double window_s = 0;
  SoakBounds bounds;
  std::vector<SoakProcess> processes;
  const SoakSeriesSet* series = nullptr;
  std::vector<SoakTopicLatency> topics;
  SoakTopicLatency overall;
  std::map<std::string, std::uint64_t> problems;  ///< What could not be read, and in how many samples.

  /// The topics, then all topics together.
  [[nodiscard]] std::vector<const SoakTopicLatency*> latencies() const;
  /// Every series and topic passed.
  [[nodiscard]] bool pass() const;
  /// The names of what failed ("rss_kib perception", "latency control/command").
  [[nodiscard]] std::vector<std::string> failed() const;
};

/// "PASS", "FAIL" or "n/a" (not judged).
inline const char* verdict_word(const SoakVerdict& v) { return !v.judged ? "n/a" : v.pass ? "PASS" : "FAIL"; }

/// The JSON document (docs/reliability.md, "Soak").
std::string soak_json(const SoakResult& result);

/// The HTML report: the verdicts, a plot of each series, each topic's
/// percentiles per window (the report page's style and plots).
std::string soak_html(const SoakResult& result);

}  // namespace axon_bench
