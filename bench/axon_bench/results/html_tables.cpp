#include "results/html_tables.hpp"

#include <algorithm>

#include "results/html_svg.hpp"
#include "results/table.hpp"

namespace axon_bench {
namespace {

const char* const kColors[] = {"#1f6fb4", "#e8710a", "#2ca02c", "#9467bd"};

std::string swatch(std::size_t input) {
  return format(R"(<span class="swatch" style="background:%s"></span>)", report_color(input)) + report_letter(input);
}

std::string cell(const std::string& text, bool name = false) {
  return std::string(name ? R"(<td class="name">)" : "<td>") + html_escape(text) + "</td>";
}

std::string us(double ns) { return format_us(ns); }

std::string optional_number(const std::optional<double>& v, const char* fmt) { return v ? format(fmt, *v) : "-"; }

}  // namespace

const char* report_color(std::size_t input) { return kColors[input % (sizeof(kColors) / sizeof(kColors[0]))]; }

std::string report_letter(std::size_t input) { return std::string(1, static_cast<char>('A' + input)); }

std::string report_key(const CaseResult& c) {
  return c.json_mode() + "|" + c.mode + "|" + c.transport + "|" + c.serializer + "|" + c.wait_strategy + "|" +
         c.message + "|" + std::to_string(c.payload_bytes) + "|" + (c.touch ? "t" : "") + "|" +
         format("%g", c.rate_hz) + "|" + c.topic.value_or("") + "|" + c.component.value_or("") + "|" +
         std::to_string(c.subscribers.value_or(0));
}

std::string table_html(const std::vector<ReportInput>& inputs, const std::vector<ReportRow>& rows,
                       std::vector<ReportColumn> columns) {
  const bool compare = inputs.size() > 1;
  // Columns that apply to none of these cases are left out.
  std::erase_if(columns, [&](const ReportColumn& column) {
    for (const auto& row : rows) {
      for (const auto* c : row.per_input) {
        if (c != nullptr && column.text(*c) != "-") {
          return false;
        }
      }
    }
    return true;
  });
  std::string out = "<table><tr><th class=\"name\">case</th>";
  if (compare) {
    out += "<th class=\"name\">run</th>";
  }
  for (const auto& column : columns) {
    out += "<th>" + html_escape(column.title) + "</th>";
  }
  out += "</tr>\n";
  for (const auto& row : rows) {
    const CaseResult* any = nullptr;
    std::size_t present = 0;
    for (const auto* c : row.per_input) {
      if (c != nullptr) {
        any = any == nullptr ? c : any;
        ++present;
      }
    }
    const bool ratio_row = compare && row.per_input.size() == 2 && present == 2;
    const std::size_t span = present + (ratio_row ? 1 : 0);
    bool first = true;
    for (std::size_t i = 0; i < row.per_input.size(); ++i) {
      const CaseResult* c = row.per_input[i];
      if (c == nullptr) {
        continue;
      }
      out += "<tr>";
      if (first) {
        out += format(R"(<td class="name" rowspan="%zu">)", span) + html_escape(any->label()) + "</td>";
        first = false;
      }
      if (compare) {
        out += "<td class=\"name\">" + swatch(i) + "</td>";
      }
      for (const auto& column : columns) {
        out += cell(column.text(*c));
      }
      out += "</tr>\n";
    }
    if (ratio_row) {
      out += "<tr class=\"ratio\"><td class=\"name\">B/A</td>";
      for (const auto& column : columns) {
        std::string text;
        if (column.value) {
          const auto a = column.value(*row.per_input[0]);
          const auto b = column.value(*row.per_input[1]);
          if (a && b && *a != 0) {
            text = format("%.2fx", *b / *a);
          }
        }
        out += cell(text);
      }
      out += "</tr>\n";
    }
  }
  return out + "</table>\n";
}

std::vector<ReportColumn> latency_columns() {
  auto lat = [](double LatencySummary::*field) {
    return ReportColumn{"", [field](const CaseResult& c) { return us(c.latency.*field); },
                        [field](const CaseResult& c) { return std::optional<double>(c.latency.*field); }};
  };
  std::vector<ReportColumn> columns;
  columns.push_back({"payload", [](const CaseResult& c) { return format_bytes(c.payload_bytes); }, {}});
  columns.push_back({"samples", [](const CaseResult& c) { return std::to_string(c.latency.samples); }, {}});
  const std::pair<const char*, double LatencySummary::*> fields[] = {
      {"mean µs", &LatencySummary::mean_ns},    {"stddev µs", &LatencySummary::stddev_ns},
      {"p50 µs", &LatencySummary::p50_ns},      {"p90 µs", &LatencySummary::p90_ns},
      {"p99 µs", &LatencySummary::p99_ns},      {"p99.9 µs", &LatencySummary::p999_ns},
      {"p99.99 µs", &LatencySummary::p9999_ns}, {"max µs", &LatencySummary::max_ns}};
  for (const auto& [title, field] : fields) {
    ReportColumn column = lat(field);
    column.title = title;
    columns.push_back(std::move(column));
  }
  columns.push_back({"x raw p50", [](const CaseResult& c) { return optional_number(c.ratio_to_raw_p50, "%.2f"); },
                     [](const CaseResult& c) { return c.ratio_to_raw_p50; }});
  columns.push_back({"x 64 B p50", [](const CaseResult& c) { return optional_number(c.ratio_to_raw64_p50, "%.2f"); },
                     [](const CaseResult& c) { return c.ratio_to_raw64_p50; }});
  columns.push_back({"msgs/s", [](const CaseResult& c) { return optional_number(c.msgs_per_s, "%.0f"); },
                     [](const CaseResult& c) { return c.msgs_per_s; }});
  columns.push_back({"cpu %", [](const CaseResult& c) { return optional_number(c.cpu_percent, "%.0f"); },
                     [](const CaseResult& c) { return c.cpu_percent; }});
  return columns;
}

std::vector<ReportColumn> throughput_columns() {
  std::vector<ReportColumn> columns;
  columns.push_back({"payload", [](const CaseResult& c) { return format_bytes(c.payload_bytes); }, {}});
  columns.push_back({"subscribers", [](const CaseResult& c) { return std::to_string(c.subscribers.value_or(0)); }, {}});
  columns.push_back({"wait", [](const CaseResult& c) { return c.wait_strategy; }, {}});
  columns.push_back({"msgs/s", [](const CaseResult& c) { return optional_number(c.msgs_per_s, "%.0f"); },
                     [](const CaseResult& c) { return c.msgs_per_s; }});
  columns.push_back({"MB/s", [](const CaseResult& c) { return optional_number(c.mb_per_s, "%.0f"); },
                     [](const CaseResult& c) { return c.mb_per_s; }});
  columns.push_back({"x memcpy", [](const CaseResult& c) { return optional_number(c.ratio_to_memcpy, "%.3g"); },
                     [](const CaseResult& c) { return c.ratio_to_memcpy; }});
  columns.push_back({"sent", [](const CaseResult& c) { return std::to_string(c.messages); }, {}});
  columns.push_back({"received per subscriber",
                     [](const CaseResult& c) {
                       std::string text;
                       for (const auto r : c.received_per_subscriber) {
                         text += text.empty() ? "" : " / ";
                         text += std::to_string(r);
                       }
                       return text;
                     },
                     {}});
  columns.push_back({"lost", [](const CaseResult& c) { return std::to_string(c.lost.value_or(0)); }, {}});
  columns.push_back({"cpu % per process",
                     [](const CaseResult& c) {
                       std::string text;
                       for (const auto v : c.cpu_percent_per_process) {
                         text += text.empty() ? "" : " / ";
                         text += format("%.0f", v);
                       }
                       return text;
                     },
                     {}});
  return columns;
}

std::vector<ReportColumn> scenario_columns() {
  std::vector<ReportColumn> columns;
  columns.push_back({"payload", [](const CaseResult& c) { return format_bytes(c.payload_bytes); }, {}});
  columns.push_back({"rate Hz", [](const CaseResult& c) { return format("%g", c.rate_hz); }, {}});
  columns.push_back({"delivered / expected",
                     [](const CaseResult& c) {
                       return std::to_string(c.delivered.value_or(0)) + " / " + std::to_string(c.expected.value_or(0));
                     },
                     {}});
  columns.push_back({"lost", [](const CaseResult& c) { return std::to_string(c.lost.value_or(0)); }, {}});
  const std::pair<const char*, double LatencySummary::*> fields[] = {
      {"mean µs", &LatencySummary::mean_ns}, {"p50 µs", &LatencySummary::p50_ns},
      {"p99 µs", &LatencySummary::p99_ns},   {"p99.9 µs", &LatencySummary::p999_ns},
      {"max µs", &LatencySummary::max_ns},   {"jitter µs", &LatencySummary::stddev_ns}};
  for (const auto& [title, field] : fields) {
    columns.push_back({title, [field](const CaseResult& c) { return us(c.latency.*field); },
                       [field](const CaseResult& c) { return std::optional<double>(c.latency.*field); }});
  }
  return columns;
}

std::vector<ReportColumn> cpu_columns() {
  return {{"cpu %", [](const CaseResult& c) { return optional_number(c.cpu_percent, "%.1f"); },
           [](const CaseResult& c) { return c.cpu_percent; }}};
}

}  // namespace axon_bench
