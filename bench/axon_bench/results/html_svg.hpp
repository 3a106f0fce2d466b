// The two plots of the HTML report as inline SVG: a latency histogram (log
// latency axis, log fraction-of-samples axis so the tail shows) and a CDF
// (log latency axis), each overlaying one series per result set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stats/stats.hpp"

namespace axon_bench {

struct PlotSeries {
  std::string name;   ///< Legend text.
  std::string color;  ///< CSS color.
  std::vector<HistogramBucket> buckets;
};

std::string histogram_svg(const std::vector<PlotSeries>& series);
std::string cdf_svg(const std::vector<PlotSeries>& series);

/// "850 ns", "1.23 µs", "45.6 µs", "1.20 ms", "2.50 s".
std::string format_duration_ns(double ns);

/// `text` with &, <, >, " escaped.
std::string html_escape(const std::string& text);

}  // namespace axon_bench
