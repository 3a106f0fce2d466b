#include <cmath>
#include <utility>

#include "results/html_line_plot.hpp"
#include "results/html_report.hpp"
#include "results/html_svg.hpp"
#include "results/table.hpp"
#include "soak/soak_result.hpp"

namespace axon_bench {
namespace {

std::string verdict_cell(const SoakVerdict& v) {
  const char* color = !v.judged ? "#777" : v.pass ? "#080" : "#c00";
  return format(R"(<td class="name" style="color:%s;font-weight:bold">%s</td>)", color, verdict_word(v));
}

std::string unit_of(const SoakSeries& s) {
  if (s.metric == "rss_kib") {
    return "KiB";
  }
  return s.metric == "pool_free_chunks" ? "free chunks" : s.metric == "registry_slots" ? "slots in use" : s.metric;
}

std::string verdict_table(const SoakResult& r) {
  std::string out =
      "<table><tr><th class=\"name\">series</th><th class=\"name\">verdict</th><th "
      "class=\"name\">figures</th></tr>\n";
  for (const SoakSeries& s : r.series->series()) {
    out += "<tr><td class=\"name\">" + html_escape(s.name()) + "</td>" + verdict_cell(s.verdict) +
           "<td class=\"name\">" + html_escape(s.verdict.figures) + "</td></tr>\n";
  }
  for (const SoakTopicLatency* t : r.latencies()) {
    out += "<tr><td class=\"name\">latency " + html_escape(t->topic) + "</td>" + verdict_cell(t->verdict) +
           "<td class=\"name\">" + html_escape(t->verdict.figures) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

std::vector<PlotMark> marks_of(const SoakResult& r) {
  return {{r.bounds.warmup_s, "warm-up"}, {r.bounds.warmup_s + r.bounds.reference_s, "reference"}};
}

std::string series_plots(const SoakResult& r) {
  const auto times = r.series->times_s();
  std::string out = "<div class=\"plots\">";
  for (const SoakSeries& s : r.series->series()) {
    const auto values = r.series->values_of(s);
    PlotLine line{s.verdict.pass ? "PASS" : "FAIL", s.verdict.pass ? "#1f77b4" : "#d62728",
                  std::vector<double>(times.begin(), times.end()), std::vector<double>(values.begin(), values.end())};
    // Memory zoomed in: 100 KiB of drift on 8 MiB is what the check looks for.
    out += line_plot_svg(s.name(), "seconds", unit_of(s), {line}, marks_of(r), s.rule == SoakRule::kMemory) + "\n";
  }
  return out + "</div>\n";
}

std::string latency_section(const SoakResult& r) {
  std::string out =
      "<table><tr><th class=\"name\">topic</th><th>window</th><th>messages</th><th>p50</th><th>p99</th>"
      "<th>p99.9</th><th>max</th></tr>\n";
  const std::vector<const SoakTopicLatency*> all = r.latencies();
  std::string plots = "<div class=\"plots\">";
  for (const SoakTopicLatency* t : all) {
    PlotLine p50{"p50", "#2ca02c", {}, {}};
    PlotLine p99{"p99", "#1f77b4", {}, {}};
    PlotLine p999{"p99.9", "#ff7f0e", {}, {}};
    for (std::size_t w = 0; w < t->windows.size(); ++w) {
      const WindowPercentiles& p = t->windows[w];
      out += "<tr><td class=\"name\">" + html_escape(t->topic) + "</td>" +
             format("<td>%.0f-%.0f s</td><td>%llu</td>", static_cast<double>(w) * r.window_s,
                    static_cast<double>(w + 1) * r.window_s, static_cast<unsigned long long>(p.count)) +
             "<td>" + format_duration_ns(p.p50_ns) + "</td><td>" + format_duration_ns(p.p99_ns) + "</td><td>" +
             format_duration_ns(p.p999_ns) + "</td><td>" + format_duration_ns(p.max_ns) + "</td></tr>\n";
      const double mid = (static_cast<double>(w) + 0.5) * r.window_s;
      const double nan = std::nan("");
      for (const auto& [line, value] :
           {std::pair<PlotLine*, double>{&p50, p.p50_ns}, std::pair<PlotLine*, double>{&p99, p.p99_ns},
            std::pair<PlotLine*, double>{&p999, p.p999_ns}}) {
        line->x.push_back(mid);
        line->y.push_back(p.count > 0 ? value / 1e3 : nan);
      }
    }
    plots += line_plot_svg("latency " + t->topic, "seconds (window middles)", "microseconds", {p50, p99, p999},
                           marks_of(r)) +
             "\n";
  }
  return out + "</table>\n" + plots + "</div>\n";
}

}  // namespace

std::string soak_html(const SoakResult& r) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>axon-bench soak - " +
                    html_escape(r.scenario_name) + "</title>\n<style>" + report_style() + "</style></head><body>\n";
  out += "<h1>axon-bench soak: " + std::string(r.pass() ? "PASS" : "FAIL") + "</h1>\n";
  out += "<div class=\"runs\"><div class=\"run\">";
  out += "scenario <b>" + html_escape(r.scenario_name) + "</b> (" + html_escape(r.scenario_file) + "), domain " +
         std::to_string(r.domain_id) + "<br>";
  out += format("%.0f s measured, a sample every %g s, latency windows of %g s, warm-up %g s<br>", r.duration_s,
                r.interval_s, r.window_s, r.bounds.warmup_s);
  out += "date " + html_escape(r.run.date_utc) + ", git " + html_escape(r.run.git_revision) + "<br>";
  out += "machine: " + html_escape(r.run.machine.cpu_model) + ", " + std::to_string(r.run.machine.cores) +
         " CPUs, kernel " + html_escape(r.run.machine.kernel) + "<br>";
  out += "command: <code>" + html_escape(r.run.command_line) + "</code>";
  for (const auto& [what, samples] : r.problems) {
    out += "<br><span class=\"note\">not read: " + html_escape(what) +
           format(" (%llu samples)", static_cast<unsigned long long>(samples)) + "</span>";
  }
  out += "</div></div>\n";
  out +=
      "<h2>Verdicts</h2>\n<p class=\"note\">The bounds and why: docs/reliability.md, \"Soak\". Memory: "
      "least-squares slope and growth after the warm-up; descriptors, threads, mappings and registry slots: never "
      "above their maximum in the reference window (the first window after the warm-up); free pool chunks: the "
      "last window's maximum at least the reference window's; latency: the last window's p99 against the first "
      "window's after the warm-up.</p>\n";
  out += verdict_table(r);
  out +=
      "<h2>Series</h2>\n<p class=\"note\">One sample per interval; dashed lines: end of the warm-up and of the "
      "reference window. Memory plots start at their lowest value, the others at 0.</p>\n";
  out += series_plots(r);
  out +=
      "<h2>Latency per window</h2>\n<p class=\"note\">From publish() to the subscriber holding the sample, all "
      "subscribers of a topic together; percentiles are upper edges of log buckets 6 % wide, max exact.</p>\n";
  out += latency_section(r);
  return out + "</body></html>\n";
}

}  // namespace axon_bench
