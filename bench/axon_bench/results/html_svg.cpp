#include "results/html_svg.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "results/table.hpp"

namespace axon_bench {
namespace {

constexpr double kWidth = 560;
constexpr double kHeight = 310;
constexpr double kLeft = 64;
constexpr double kRight = 26;
constexpr double kTop = 46;
constexpr double kBottom = 44;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr double kPlotHeight = kHeight - kTop - kBottom;

std::string num(double v) { return format("%.1f", v); }

/// A log10 axis over whole decades covering [lo, hi].
struct LogAxis {
  double lo_exp = 0;
  double hi_exp = 1;
  LogAxis(double lo, double hi) {
    lo = std::max(lo, 1e-3);
    hi = std::max(hi, lo * 1.0001);
    lo_exp = std::floor(std::log10(lo));
    hi_exp = std::ceil(std::log10(hi));
    if (hi_exp <= lo_exp) {
      hi_exp = lo_exp + 1;
    }
  }
  [[nodiscard]] double fraction(double v) const {
    v = std::max(v, std::pow(10.0, lo_exp));
    return (std::log10(v) - lo_exp) / (hi_exp - lo_exp);
  }
};

/// x range of all series: the lowest non-zero lower edge to the highest upper edge.
LogAxis x_axis_of(const std::vector<PlotSeries>& series) {
  double lo = std::numeric_limits<double>::max();
  double hi = 0;
  for (const auto& s : series) {
    for (const auto& b : s.buckets) {
      lo = std::min(lo, b.lower_ns > 0 ? b.lower_ns : b.upper_ns / 2);
      hi = std::max(hi, b.upper_ns);
    }
  }
  if (hi == 0) {
    return {1, 10};
  }
  return {lo, hi};
}

double x_of(const LogAxis& axis, double ns) { return kLeft + axis.fraction(ns) * kPlotWidth; }

std::string open_svg(const std::string& title) {
  return format(
             R"(<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img">)",
             kWidth, kHeight, kWidth, kHeight) +
         "<title>" + html_escape(title) + "</title>" +
         format(R"(<rect x="0" y="0" width="%.0f" height="%.0f" fill="#fff"/>)", kWidth, kHeight);
}

/// Vertical grid and labels of the latency axis; 2x and 5x minor lines, labelled when few decades are shown.
std::string x_grid(const LogAxis& axis) {
  std::string out;
  const bool label_minor = axis.hi_exp - axis.lo_exp <= 2;
  for (double e = axis.lo_exp; e <= axis.hi_exp + 1e-9; e += 1) {
    for (const double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (std::log10(v) > axis.hi_exp + 1e-9) {
        break;
      }
      const double x = x_of(axis, v);
      const bool major = m == 1.0;
      out += format(R"(<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>)", num(x).c_str(),
                    num(kTop).c_str(), num(x).c_str(), num(kTop + kPlotHeight).c_str(), major ? "#ccc" : "#eee");
      if (major || label_minor) {
        out += format(R"(<text x="%s" y="%s" font-size="11" text-anchor="middle" fill="%s">%s</text>)", num(x).c_str(),
                      num(kTop + kPlotHeight + 15).c_str(), major ? "#333" : "#888",
                      html_escape(format_duration_ns(v)).c_str());
      }
    }
  }
  out += format(R"(<text x="%s" y="%s" font-size="12" text-anchor="middle" fill="#333">latency (log scale)</text>)",
                num(kLeft + kPlotWidth / 2).c_str(), num(kHeight - 6).c_str());
  return out;
}

std::string frame() {
  return format(R"(<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#888"/>)", num(kLeft).c_str(),
                num(kTop).c_str(), num(kPlotWidth).c_str(), num(kPlotHeight).c_str());
}

std::string legend(const std::vector<PlotSeries>& series, const std::string& title) {
  std::string out = format(R"(<text x="%s" y="15" font-size="13" font-weight="bold" fill="#222">%s</text>)",
                           num(kLeft).c_str(), html_escape(title).c_str());
  // One row under the title; each entry as wide as its text (about 6.2 px a character at 11 px).
  double x = kLeft;
  for (const auto& s : series) {
    out += format(R"(<rect x="%s" y="23" width="14" height="10" fill="%s" fill-opacity="0.5" stroke="%s"/>)",
                  num(x).c_str(), s.color.c_str(), s.color.c_str());
    out += format(R"(<text x="%s" y="32" font-size="11" fill="#222">%s</text>)", num(x + 18).c_str(),
                  html_escape(s.name).c_str());
    x += 30 + 6.2 * static_cast<double>(s.name.size());
  }
  return out;
}

std::uint64_t total_of(const PlotSeries& s) {
  std::uint64_t total = 0;
  for (const auto& b : s.buckets) {
    total += b.count;
  }
  return total;
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string format_duration_ns(double ns) {
  const double a = std::fabs(ns);
  auto trim = [](double v, const char* unit) {
    if (std::fabs(v - std::round(v)) < 1e-9 * std::max(1.0, std::fabs(v))) {
      return format("%.0f %s", v, unit);  // axis ticks: "1 µs", "10 ms"
    }
    return format(v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v, unit);
  };
  if (a < 1e3) {
    return format(a >= 10 || a == std::floor(a) ? "%.0f ns" : "%.1f ns", ns);
  }
  if (a < 1e6) {
    return trim(ns / 1e3, "µs");
  }
  if (a < 1e9) {
    return trim(ns / 1e6, "ms");
  }
  return trim(ns / 1e9, "s");
}

std::string histogram_svg(const std::vector<PlotSeries>& series) {
  const LogAxis x = x_axis_of(series);
  // y: fraction of the series' samples per bucket, log scale down to the
  // smallest non-empty fraction (one sample).
  double min_fraction = 1;
  for (const auto& s : series) {
    const double total = static_cast<double>(std::max<std::uint64_t>(1, total_of(s)));
    for (const auto& b : s.buckets) {
      min_fraction = std::min(min_fraction, static_cast<double>(b.count) / total);
    }
  }
  const double y_lo = std::min(-1.0, std::floor(std::log10(std::max(min_fraction, 1e-9))));
  auto y_of = [&](double fraction) {
    const double f = (std::log10(std::max(fraction, std::pow(10.0, y_lo))) - y_lo) / (0.0 - y_lo);
    return kTop + kPlotHeight - f * kPlotHeight;
  };
  std::string out = open_svg("latency histogram");
  out += x_grid(x);
  for (double e = y_lo; e <= 0; e += 1) {
    const double y = y_of(std::pow(10.0, e));
    out += format(R"(<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#eee"/>)", num(kLeft).c_str(), num(y).c_str(),
                  num(kLeft + kPlotWidth).c_str(), num(y).c_str());
    const double percent = 100 * std::pow(10.0, e);
    out +=
        format(R"(<text x="%s" y="%s" font-size="11" text-anchor="end" fill="#333">%s</text>)", num(kLeft - 5).c_str(),
               num(y + 4).c_str(), (percent >= 1 ? format("%.0f%%", percent) : format("%g%%", percent)).c_str());
  }
  out += format(
      R"svg(<text x="14" y="%s" font-size="12" text-anchor="middle" fill="#333" transform="rotate(-90 14 %s)">samples per bucket (log)</text>)svg",
      num(kTop + kPlotHeight / 2).c_str(), num(kTop + kPlotHeight / 2).c_str());
  const double base = kTop + kPlotHeight;
  for (const auto& s : series) {
    const double total = static_cast<double>(std::max<std::uint64_t>(1, total_of(s)));
    for (const auto& b : s.buckets) {
      const double x0 = x_of(x, b.lower_ns > 0 ? b.lower_ns : b.upper_ns / 2);
      const double x1 = std::max(x0 + 1.0, x_of(x, b.upper_ns));
      const double y = y_of(static_cast<double>(b.count) / total);
      out += format(
          R"(<rect x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.35" stroke="%s" stroke-width="0.8"/>)",
          num(x0).c_str(), num(y).c_str(), num(x1 - x0).c_str(), num(std::max(0.5, base - y)).c_str(), s.color.c_str(),
          s.color.c_str());
    }
  }
  out += frame();
  out += legend(series, "Histogram");
  return out + "</svg>";
}

std::string cdf_svg(const std::vector<PlotSeries>& series) {
  const LogAxis x = x_axis_of(series);
  auto y_of = [](double fraction) { return kTop + kPlotHeight - fraction * kPlotHeight; };
  std::string out = open_svg("latency CDF");
  out += x_grid(x);
  for (const double f : {0.0, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0}) {
    const double y = y_of(f);
    const bool marked = f == 0.5 || f == 0.9 || f == 0.99;
    out += format(R"(<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"%s/>)", num(kLeft).c_str(), num(y).c_str(),
                  num(kLeft + kPlotWidth).c_str(), num(y).c_str(), marked ? "#bbb" : "#eee",
                  marked ? R"( stroke-dasharray="4 3")" : "");
    if (f == 0.99) {  // too close to 100 % for the axis: labelled inside, at the right
      out += format(R"(<text x="%s" y="%s" font-size="10" text-anchor="end" fill="#777">99%%</text>)",
                    num(kLeft + kPlotWidth - 3).c_str(), num(y + 11).c_str());
      continue;
    }
    out += format(R"(<text x="%s" y="%s" font-size="11" text-anchor="end" fill="#333">%s</text>)",
                  num(kLeft - 5).c_str(), num(y + 4).c_str(), format("%g%%", f * 100).c_str());
  }
  out += format(
      R"svg(<text x="14" y="%s" font-size="12" text-anchor="middle" fill="#333" transform="rotate(-90 14 %s)">samples at or below</text>)svg",
      num(kTop + kPlotHeight / 2).c_str(), num(kTop + kPlotHeight / 2).c_str());
  for (const auto& s : series) {
    const double total = static_cast<double>(std::max<std::uint64_t>(1, total_of(s)));
    if (s.buckets.empty()) {
      continue;
    }
    std::string path;
    double cumulative = 0;
    const auto& first = s.buckets.front();
    path += 'M';
    path += num(x_of(x, first.lower_ns > 0 ? first.lower_ns : first.upper_ns / 2));
    path += ',';
    path += num(y_of(0));
    for (const auto& b : s.buckets) {
      const double x0 = x_of(x, b.lower_ns > 0 ? b.lower_ns : b.upper_ns / 2);
      path += " L" + num(x0) + "," + num(y_of(cumulative));
      cumulative += static_cast<double>(b.count) / total;
      path += " L" + num(x_of(x, b.upper_ns)) + "," + num(y_of(cumulative));
    }
    path += " L" + num(kLeft + kPlotWidth) + "," + num(y_of(cumulative));
    out += format(R"(<path d="%s" fill="none" stroke="%s" stroke-width="2"/>)", path.c_str(), s.color.c_str());
  }
  out += frame();
  out += legend(series, "CDF");
  return out + "</svg>";
}

}  // namespace axon_bench
