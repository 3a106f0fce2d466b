// The HTML report: one self-contained page (inline CSS and SVG, no scripts,
// nothing fetched from the network) with the run's context, its tables and,
// for every case with latencies, a histogram and a CDF. Given two results it
// overlays them in each plot (legend A/B) and sets their rows side by side.
#pragma once

#include <string>
#include <vector>

#include "results/result_log.hpp"

namespace axon_bench {

/// One result set and what to call it in the page (its file name).
struct ReportInput {
  std::string name;
  ResultLog log;
};

/// The page's CSS (tables, run cards, plot rows), for other pages of
/// axon-bench (the soak's) to look the same.
const char* report_style();

/// The whole page. `inputs` holds one or two (more are drawn too).
std::string render_html_report(const std::vector<ReportInput>& inputs);

/// Writes the page for `inputs` to `path`. Returns "" or what went wrong.
std::string write_html_report(const std::vector<ReportInput>& inputs, const std::string& path);

}  // namespace axon_bench
