#include "results/chaos_log.hpp"

#include <algorithm>
#include <cmath>

#include "results/html_svg.hpp"
#include "results/result_log.hpp"
#include "results/table.hpp"

namespace axon_bench {
namespace {

std::string number_json(double value) { return std::isfinite(value) ? format("%.6g", value) : "null"; }

std::string numbers_json(const std::vector<double>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += (i == 0 ? "" : ", ") + number_json(values[i]);
  }
  return out + "]";
}

std::string text_of(const YAML::Node& map, const char* key) {
  const YAML::Node value = map[key];
  return value.IsDefined() && value.IsScalar() ? value.Scalar() : "";
}

double number_of(const YAML::Node& map, const char* key) {
  const YAML::Node value = map[key];
  double number = 0;
  return value.IsDefined() && value.IsScalar() && YAML::convert<double>::decode(value, number) ? number : 0;
}

std::vector<double> numbers_of(const YAML::Node& node) {
  std::vector<double> out;
  if (node.IsSequence()) {
    for (const auto& v : node) {
      double x = 0;
      out.push_back(v.IsScalar() && YAML::convert<double>::decode(v, x) ? x : 0);
    }
  }
  return out;
}

constexpr const char* kFaultColors[] = {"#d62728", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

const char* fault_color(const std::string& kind) {
  static const char* const kinds[] = {"kill", "stop", "burst", "cpu_hog", "memory_pressure", "shm_full"};
  for (std::size_t i = 0; i < 6; ++i) {
    if (kind == kinds[i]) {
      return kFaultColors[i];
    }
  }
  return "#777";
}

/// One SVG: a lane per fault at the top, then per series a row of its rate and a row of its largest latency, the
/// faults' spans shaded across all rows.
std::string timeline_svg(const ChaosLog& log) {
  constexpr double kLeft = 260;
  constexpr double kWidth = 760;
  constexpr double kLane = 16;
  constexpr double kRow = 34;
  std::size_t buckets = 0;
  for (const auto& s : log.series) {
    buckets = std::max(buckets, s.rate_hz.size());
  }
  const double span_s = std::max(log.duration_s, static_cast<double>(buckets) * log.bucket_s);
  if (span_s <= 0) {
    return "";
  }
  const auto x_of = [&](double t) { return kLeft + kWidth * std::clamp(t / span_s, 0.0, 1.0); };
  const double faults_h = kLane * static_cast<double>(log.faults.size());
  const double height = faults_h + 2 * kRow * static_cast<double>(log.series.size()) + 30;
  std::string svg = format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-size="10">)",
                           kLeft + kWidth + 10, height);
  for (std::size_t i = 0; i < log.faults.size(); ++i) {
    const ChaosFaultEntry& f = log.faults[i];
    const double x0 = x_of(f.begun_s);
    const double x1 = std::max(x_of(f.ended_s), x0 + 2);
    svg += format(R"(<rect x="%.1f" y="0" width="%.1f" height="%.0f" fill="%s" opacity="0.10"/>)", x0, x1 - x0,
                  height - 20, fault_color(f.kind));
    svg += format(R"(<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>)", x0,
                  kLane * static_cast<double>(i) + 2, x1 - x0, kLane - 4, fault_color(f.kind));
    svg += format(R"(<text x="4" y="%.1f">%s</text>)", kLane * static_cast<double>(i) + 12,
                  html_escape(f.kind + (f.target.empty() ? "" : " " + f.target)).c_str());
  }
  double y = faults_h;
  for (const auto& s : log.series) {
    for (int row = 0; row < 2; ++row) {
      const std::vector<double>& values = row == 0 ? s.rate_hz : s.max_us;
      const double top = values.empty() ? 0 : *std::max_element(values.begin(), values.end());
      std::string points;
      for (std::size_t b = 0; b < values.size(); ++b) {
        const double v = top > 0 ? values[b] / top : 0;
        points +=
            format("%.1f,%.1f ", x_of((static_cast<double>(b) + 0.5) * log.bucket_s), y + kRow - 4 - v * (kRow - 8));
      }
      svg += format(R"(<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/>)", kLeft, y + kRow - 4,
                    kLeft + kWidth, y + kRow - 4);
      svg += format(R"(<polyline fill="none" stroke="%s" stroke-width="1.2" points="%s"/>)",
                    row == 0 ? "#1f77b4" : "#2ca02c", points.c_str());
      const std::string name = row == 0 ? format("%s: rate (max %.0f/s)", s.label.c_str(), top)
                                        : format("latency max (top %s)%s", format_duration_ns(top * 1e3).c_str(),
                                                 s.touched ? ", touched" : "");
      svg += format(R"(<text x="4" y="%.1f">%s</text>)", y + kRow / 2 + 3, html_escape(name).c_str());
      y += kRow;
    }
  }
  for (double t = 0; t <= span_s + 1e-9; t += std::max(1.0, std::ceil(span_s / 10))) {
    svg += format(R"(<text x="%.1f" y="%.1f" text-anchor="middle">%.0f s</text>)", x_of(t), height - 6, t);
  }
  return svg + "</svg>";
}

}  // namespace

bool ChaosLog::passed() const {
  return !checks.empty() && std::all_of(checks.begin(), checks.end(), [](const auto& c) { return c.pass; });
}

std::string chaos_json(const ChaosLog& log) {
  std::string out = "{\n    \"scenario\": " + json_string(log.scenario);
  out += ",\n    \"seed\": " + (log.seed ? std::to_string(*log.seed) : std::string("null"));
  out += ",\n    \"duration_s\": " + number_json(log.duration_s);
  out += ",\n    \"baseline_duration_s\": " + number_json(log.baseline_duration_s);
  out += ",\n    \"bucket_s\": " + number_json(log.bucket_s);
  out += std::string(",\n    \"passed\": ") + (log.passed() ? "true" : "false");
  out += ",\n    \"faults\": [";
  for (std::size_t i = 0; i < log.faults.size(); ++i) {
    const ChaosFaultEntry& f = log.faults[i];
    out += (i == 0 ? "\n      " : ",\n      ") +
           format(R"({"kind": %s, "target": %s, "schedule": %s, "at_s": %s, "begun_s": %s, "ended_s": %s, "note": %s})",
                  json_string(f.kind).c_str(), json_string(f.target).c_str(), json_string(f.yaml).c_str(),
                  number_json(f.at_s).c_str(), number_json(f.begun_s).c_str(), number_json(f.ended_s).c_str(),
                  json_string(f.note).c_str());
  }
  out += log.faults.empty() ? "]" : "\n    ]";
  out += ",\n    \"checks\": [";
  for (std::size_t i = 0; i < log.checks.size(); ++i) {
    const ChaosCheckEntry& c = log.checks[i];
    out += (i == 0 ? "\n      " : ",\n      ") + format(R"({"name": %s, "result": "%s", "figure": %s, "bound": %s})",
                                                        json_string(c.name).c_str(), c.pass ? "PASS" : "FAIL",
                                                        json_string(c.figure).c_str(), json_string(c.bound).c_str());
  }
  out += log.checks.empty() ? "]" : "\n    ]";
  out += ",\n    \"series\": [";
  for (std::size_t i = 0; i < log.series.size(); ++i) {
    const ChaosSeriesEntry& s = log.series[i];
    out += (i == 0 ? "\n      " : ",\n      ") +
           format(R"({"label": %s, "touched": %s, "rate_hz": %s, "max_us": %s})", json_string(s.label).c_str(),
                  s.touched ? "true" : "false", numbers_json(s.rate_hz).c_str(), numbers_json(s.max_us).c_str());
  }
  out += log.series.empty() ? "]" : "\n    ]";
  return out + "\n  }";
}

std::optional<ChaosLog> chaos_of(const YAML::Node& node) {
  if (!node.IsDefined() || !node.IsMap()) {
    return std::nullopt;
  }
  ChaosLog log;
  log.scenario = text_of(node, "scenario");
  if (const YAML::Node seed = node["seed"]; seed.IsDefined() && !seed.IsNull()) {
    log.seed = seed.as<std::uint64_t>();
  }
  log.duration_s = number_of(node, "duration_s");
  log.baseline_duration_s = number_of(node, "baseline_duration_s");
  log.bucket_s = number_of(node, "bucket_s");
  for (const auto& f : node["faults"]) {
    log.faults.push_back({.kind = text_of(f, "kind"),
                          .target = text_of(f, "target"),
                          .yaml = text_of(f, "schedule"),
                          .at_s = number_of(f, "at_s"),
                          .begun_s = number_of(f, "begun_s"),
                          .ended_s = number_of(f, "ended_s"),
                          .note = text_of(f, "note")});
  }
  for (const auto& c : node["checks"]) {
    log.checks.push_back({.name = text_of(c, "name"),
                          .pass = text_of(c, "result") == "PASS",
                          .figure = text_of(c, "figure"),
                          .bound = text_of(c, "bound")});
  }
  for (const auto& s : node["series"]) {
    log.series.push_back({.label = text_of(s, "label"),
                          .touched = text_of(s, "touched") == "true",
                          .rate_hz = numbers_of(s["rate_hz"]),
                          .max_us = numbers_of(s["max_us"])});
  }
  return log;
}

std::string chaos_html(const ChaosLog& log) {
  std::string out = format("<h2>Chaos: %s, %s</h2>\n", html_escape(log.scenario).c_str(),
                           log.passed() ? "every check passed" : "checks FAILED");
  out +=
      "<table><tr><th class=\"name\">check</th><th>result</th><th class=\"name\">figures</th>"
      "<th class=\"name\">bound</th></tr>\n";
  for (const ChaosCheckEntry& c : log.checks) {
    out += format(
        "<tr><td class=\"name\">%s</td><td class=\"%s\">%s</td><td class=\"wrap\">%s</td>"
        "<td class=\"name\">%s</td></tr>\n",
        html_escape(c.name).c_str(), c.pass ? "pass" : "fail", c.pass ? "PASS" : "FAIL", html_escape(c.figure).c_str(),
        html_escape(c.bound).c_str());
  }
  out += "</table>\n<h3>Fault schedule</h3>\n<p class=\"note\">";
  out += log.seed ? format("Random faults drawn from seed %llu. ", static_cast<unsigned long long>(*log.seed))
                  : std::string("No random faults. ");
  out += format(
      "Times from the start of the measured window (%.1f s; fault-free baseline %.1f s). Each line below "
      "is a <code>faults:</code> entry that replays the fault.</p>\n<pre>",
      log.duration_s, log.baseline_duration_s);
  for (const ChaosFaultEntry& f : log.faults) {
    const std::string note = f.note.empty() ? "" : "; " + html_escape(f.note);
    out += format("- %s   # began %.2f s, ended %.2f s%s\n", html_escape(f.yaml).c_str(), f.begun_s, f.ended_s,
                  note.c_str());
  }
  out +=
      "</pre>\n<h3>Timeline</h3>\n<p class=\"note\">The faults (top, and shaded), then per topic and subscriber "
      "its rate and its largest latency per " +
      format("%.2f", log.bucket_s) + " s, each row scaled to its own maximum.</p>\n";
  return out + timeline_svg(log) + "\n";
}

}  // namespace axon_bench
