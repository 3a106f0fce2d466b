#include "results/html_report.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "results/html_svg.hpp"
#include "results/html_tables.hpp"
#include "results/table.hpp"

namespace axon_bench {
namespace {

constexpr const char* kStyle = R"(
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 24px; margin-bottom: 4px; }
h2 { font-size: 19px; margin-top: 32px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 22px 0 6px; }
.runs { display: flex; flex-wrap: wrap; gap: 12px; }
.run { border: 1px solid #ddd; border-left: 6px solid #888; padding: 8px 12px; font-size: 13px; max-width: 660px; }
.run code { font-size: 12px; word-break: break-all; }
table { border-collapse: collapse; font-size: 12.5px; margin: 8px 0; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: right; white-space: nowrap; }
th { background: #f3f3f3; }
td.name, th.name { text-align: left; }
tr.ratio td { color: #555; font-style: italic; background: #fafafa; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 5px; border-radius: 2px; }
.plots { display: flex; flex-wrap: wrap; gap: 10px; }
.plots svg { border: 1px solid #eee; }
.note { font-size: 12.5px; color: #555; }
td.pass { color: #1a7f37; font-weight: bold; } td.fail { color: #cf222e; font-weight: bold; }
td.wrap { white-space: normal; text-align: left; max-width: 760px; }
)";

std::string run_card(const ReportInput& input, std::size_t index, bool compare) {
  const RunInfo& r = input.log.run;
  std::string out = format(R"(<div class="run" style="border-left-color:%s">)", report_color(index));
  out += "<b>" + (compare ? report_letter(index) + ": " : std::string()) + html_escape(input.name) + "</b><br>";
  out += "date " + html_escape(r.date_utc) + ", git " + html_escape(r.git_revision) + "<br>";
  out += "machine: " + html_escape(r.machine.cpu_model) + ", " + std::to_string(r.machine.cores) + " CPUs, kernel " +
         html_escape(r.machine.kernel) + "<br>";
  if (!r.cpus.empty()) {
    std::string cpus;
    for (const int cpu : r.cpus) {
      cpus += cpus.empty() ? "" : ",";
      cpus += std::to_string(cpu);
    }
    out += "CPUs " + cpus + "<br>";
  }
  out += "command: <code>" + html_escape(r.command_line) + "</code>";
  for (const auto& note : r.notes) {
    out += "<br><span class=\"note\">note: " + html_escape(note) + "</span>";
  }
  return out + "</div>\n";
}

std::string plots_html(const std::vector<ReportInput>& inputs, const std::vector<ReportRow>& rows) {
  std::string out;
  for (const auto& row : rows) {
    std::vector<PlotSeries> series;
    const CaseResult* any = nullptr;
    for (std::size_t i = 0; i < row.per_input.size(); ++i) {
      const CaseResult* c = row.per_input[i];
      if (c == nullptr || c->latency.histogram.empty()) {
        continue;
      }
      any = any == nullptr ? c : any;
      std::string name = inputs.size() > 1 ? report_letter(i) + ": " : std::string();
      name += format("p50 %s, p99 %s", format_duration_ns(c->latency.p50_ns).c_str(),
                     format_duration_ns(c->latency.p99_ns).c_str());
      series.push_back({name, report_color(i), c->latency.histogram});
    }
    if (series.empty()) {
      continue;
    }
    out += "<h3>" + html_escape(any->label()) + "</h3>\n<div class=\"plots\">" + histogram_svg(series) + "\n" +
           cdf_svg(series) + "</div>\n";
  }
  return out;
}

}  // namespace

const char* report_style() { return kStyle; }

std::string render_html_report(const std::vector<ReportInput>& inputs) {
  const bool compare = inputs.size() > 1;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>axon-bench report";
  for (const auto& input : inputs) {
    out += " - " + html_escape(input.name);
  }
  out += "</title>\n<style>" + std::string(kStyle) + "</style></head><body>\n";
  out += compare ? "<h1>axon-bench: two runs compared</h1>\n" : "<h1>axon-bench report</h1>\n";
  out += "<div class=\"runs\">";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    out += run_card(inputs[i], i, compare);
  }
  out += "</div>\n";

  const auto latency_rows =
      report_rows(inputs, [](const CaseResult& c) { return c.has_latency && c.benchmark != "scenario"; });
  const auto throughput_rows = report_rows(inputs, [](const CaseResult& c) {
    return c.benchmark == "throughput" || (c.benchmark == "network" && !c.has_latency);
  });
  const auto scenario_rows =
      report_rows(inputs, [](const CaseResult& c) { return c.benchmark == "scenario" && c.topic; });
  const auto cpu_rows = report_rows(inputs, [](const CaseResult& c) { return c.benchmark == "scenario" && !c.topic; });
  for (const auto& input : inputs) {
    if (input.log.chaos) {
      out += chaos_html(*input.log.chaos);
    }
  }
  if (!latency_rows.empty()) {
    out +=
        "<h2>Latency</h2>\n<p class=\"note\">One-way, in microseconds (ping-pong round trips halved; memcpy: time "
        "per copy). x raw p50: p50 / the same run's raw cache-line ping-pong; x 64 B p50: p50 / the same run's 64 B "
        "raw struct (serializer cases).</p>\n";
    out += table_html(inputs, latency_rows, latency_columns());
  }
  if (!throughput_rows.empty()) {
    out +=
        "<h2>Throughput</h2>\n<p class=\"note\">One publisher to N subscriber processes, lossless. msgs/s: "
        "messages delivered to every subscriber per second; x memcpy: MB/s / the memcpy bandwidth of the same size "
        "in the same run.</p>\n";
    out += table_html(inputs, throughput_rows, throughput_columns());
  }
  if (!scenario_rows.empty()) {
    out +=
        "<h2>Scenario: per topic and subscriber</h2>\n<p class=\"note\">Latency from publish() to the subscriber "
        "holding the sample, in microseconds; jitter = standard deviation; lost = published but not "
        "delivered.</p>\n";
    out += table_html(inputs, scenario_rows, scenario_columns());
  }
  if (!cpu_rows.empty()) {
    out +=
        "<h2>Scenario: CPU per process</h2>\n<p class=\"note\">User + system time over the measured window, 100 = "
        "one core.</p>\n";
    out += table_html(inputs, cpu_rows, cpu_columns());
  }
  if (!latency_rows.empty() || !scenario_rows.empty()) {
    out +=
        "<h2>Distributions</h2>\n<p class=\"note\">Histogram: share of the samples in each bucket (40 buckets per "
        "decade), both axes logarithmic so the tail shows. CDF: share of samples at or below a latency.</p>\n";
    out += plots_html(inputs, latency_rows);
    out += plots_html(inputs, scenario_rows);
  }
  out += "</body></html>\n";
  return out;
}

std::string write_html_report(const std::vector<ReportInput>& inputs, const std::string& path) {
  return write_text_file(path, render_html_report(inputs));
}

}  // namespace axon_bench
