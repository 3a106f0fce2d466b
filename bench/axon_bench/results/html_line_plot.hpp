// A line plot for the HTML pages: values over time (linear axes), one line
// per series, as inline SVG like the report's histograms (html_svg.hpp).
// The soak's report draws each sampled series with it.
#pragma once

#include <string>
#include <vector>

namespace axon_bench {

struct PlotLine {
  std::string name;   ///< Legend text.
  std::string color;  ///< CSS color.
  std::vector<double> x;
  std::vector<double> y;  ///< NaN: a gap.
};

/// Markers drawn across the plot: a vertical line at `x` labelled `label`.
struct PlotMark {
  double x = 0;
  std::string label;
};

/// `lines` over a shared x axis titled `x_label`, y axis `y_label` (from 0
/// unless the values go below), `marks` as dashed verticals.
std::string line_plot_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                          const std::vector<PlotLine>& lines, const std::vector<PlotMark>& marks = {});

}  // namespace axon_bench
