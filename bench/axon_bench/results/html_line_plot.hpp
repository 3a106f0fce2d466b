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

/// `lines` over a shared x axis titled `x_label`, y axis `y_label`, `marks`
/// as dashed verticals. The y axis starts at 0 (unless values go below), or
/// with `zoom` at the lowest value, so that a small drift of a large value
/// shows (the axis labels say where it starts).
std::string line_plot_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                          const std::vector<PlotLine>& lines, const std::vector<PlotMark>& marks = {},
                          bool zoom = false);

}  // namespace axon_bench
