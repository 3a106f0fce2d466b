#include "results/html_line_plot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "results/html_svg.hpp"
#include "results/table.hpp"

namespace axon_bench {
namespace {

constexpr double kWidth = 440;
constexpr double kHeight = 220;
constexpr double kLeft = 66;
constexpr double kRight = 14;
constexpr double kTop = 40;
constexpr double kBottom = 36;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr double kPlotHeight = kHeight - kTop - kBottom;

std::string num(double v) { return format("%.1f", v); }

/// A step of 1, 2 or 5 times a power of ten giving about four ticks over `range`.
double tick_step(double range) {
  const double raw = range / 4;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw) {
      return m * power;
    }
  }
  return 10 * power;
}

struct Range {
  double lo = std::numeric_limits<double>::max();
  double hi = std::numeric_limits<double>::lowest();
  void add(double v) {
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  void settle() {
    if (lo > hi) {
      lo = 0;
      hi = 1;
    }
    if (hi - lo < 1e-9 * std::max(1.0, std::fabs(hi))) {
      hi = lo + std::max(1.0, std::fabs(lo) * 0.1);  // a flat line sits inside the plot
    }
  }
};

}  // namespace

std::string line_plot_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                          const std::vector<PlotLine>& lines, const std::vector<PlotMark>& marks, bool zoom) {
  Range xr;
  Range yr;
  if (!zoom) {
    yr.add(0);
  }
  for (const auto& line : lines) {
    for (std::size_t i = 0; i < line.x.size() && i < line.y.size(); ++i) {
      if (std::isfinite(line.y[i])) {
        xr.add(line.x[i]);
        yr.add(line.y[i]);
      }
    }
  }
  xr.settle();
  const double margin = (yr.hi - yr.lo) * 0.05;
  yr.hi += margin;
  yr.lo -= zoom ? margin : 0;
  yr.settle();
  auto x_of = [&](double x) { return kLeft + (x - xr.lo) / (xr.hi - xr.lo) * kPlotWidth; };
  auto y_of = [&](double y) { return kTop + kPlotHeight - (y - yr.lo) / (yr.hi - yr.lo) * kPlotHeight; };

  std::string out = format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img">)",
      kWidth, kHeight, kWidth, kHeight);
  out += "<title>" + html_escape(title) + "</title>";
  out += format(R"(<rect x="0" y="0" width="%.0f" height="%.0f" fill="#fff"/>)", kWidth, kHeight);
  const double ys = tick_step(yr.hi - yr.lo);
  for (double y = std::ceil(yr.lo / ys) * ys; y <= yr.hi; y += ys) {
    out += format(R"(<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#eee"/>)", num(kLeft).c_str(), num(y_of(y)).c_str(),
                  num(kLeft + kPlotWidth).c_str(), num(y_of(y)).c_str());
    out += format(R"(<text x="%s" y="%s" font-size="10" text-anchor="end" fill="#333">%g</text>)",
                  num(kLeft - 4).c_str(), num(y_of(y) + 3).c_str(), y);
  }
  const double xs = tick_step(xr.hi - xr.lo);
  for (double x = std::ceil(xr.lo / xs) * xs; x <= xr.hi; x += xs) {
    out += format(R"(<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#eee"/>)", num(x_of(x)).c_str(), num(kTop).c_str(),
                  num(x_of(x)).c_str(), num(kTop + kPlotHeight).c_str());
    out += format(R"(<text x="%s" y="%s" font-size="10" text-anchor="middle" fill="#333">%g</text>)",
                  num(x_of(x)).c_str(), num(kTop + kPlotHeight + 13).c_str(), x);
  }
  for (const auto& mark : marks) {
    if (mark.x < xr.lo || mark.x > xr.hi) {
      continue;
    }
    out += format(R"(<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#999" stroke-dasharray="4 3"/>)",
                  num(x_of(mark.x)).c_str(), num(kTop).c_str(), num(x_of(mark.x)).c_str(),
                  num(kTop + kPlotHeight).c_str());
    out += format(R"(<text x="%s" y="%s" font-size="9" fill="#777">%s</text>)", num(x_of(mark.x) + 3).c_str(),
                  num(kTop + 10).c_str(), html_escape(mark.label).c_str());
  }
  double legend_x = kLeft;
  for (const auto& line : lines) {
    std::string path;
    bool pen_down = false;
    // Hours of samples are more points than pixels: each pixel column draws the lowest and the highest of its
    // points, so the page stays small and a spike still shows.
    double column = -1;
    double column_lo = 0;
    double column_hi = 0;
    auto draw_column = [&] {
      if (column >= 0) {
        path += (pen_down ? " L" : " M") + num(column) + "," + num(y_of(column_lo));
        if (column_hi != column_lo) {
          path += " L" + num(column) + "," + num(y_of(column_hi));
        }
        pen_down = true;
      }
      column = -1;
    };
    for (std::size_t i = 0; i < line.x.size() && i < line.y.size(); ++i) {
      if (!std::isfinite(line.y[i])) {
        draw_column();
        pen_down = false;
        continue;
      }
      const double x = std::round(x_of(line.x[i]));
      if (x != column) {
        draw_column();
        column = x;
        column_lo = line.y[i];
        column_hi = line.y[i];
      } else {
        column_lo = std::min(column_lo, line.y[i]);
        column_hi = std::max(column_hi, line.y[i]);
      }
    }
    draw_column();
    out += format(R"(<path d="%s" fill="none" stroke="%s" stroke-width="1.5"/>)", path.c_str(), line.color.c_str());
    out +=
        format(R"(<rect x="%s" y="23" width="12" height="3" fill="%s"/>)", num(legend_x).c_str(), line.color.c_str());
    out += format(R"(<text x="%s" y="28" font-size="10" fill="#222">%s</text>)", num(legend_x + 15).c_str(),
                  html_escape(line.name).c_str());
    legend_x += 26 + 5.6 * static_cast<double>(line.name.size());
  }
  out += format(R"(<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#888"/>)", num(kLeft).c_str(),
                num(kTop).c_str(), num(kPlotWidth).c_str(), num(kPlotHeight).c_str());
  out += format(R"(<text x="%s" y="14" font-size="12" font-weight="bold" fill="#222">%s</text>)", num(kLeft).c_str(),
                html_escape(title).c_str());
  out += format(R"(<text x="%s" y="%s" font-size="10" text-anchor="middle" fill="#333">%s</text>)",
                num(kLeft + kPlotWidth / 2).c_str(), num(kHeight - 6).c_str(), html_escape(x_label).c_str());
  out += format(
      R"svg(<text x="12" y="%s" font-size="10" text-anchor="middle" fill="#333" transform="rotate(-90 12 %s)">%s</text>)svg",
      num(kTop + kPlotHeight / 2).c_str(), num(kTop + kPlotHeight / 2).c_str(), html_escape(y_label).c_str());
  return out + "</svg>";
}

}  // namespace axon_bench
