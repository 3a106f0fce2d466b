// The tables of the HTML report: cases matched across the result files by
// what they measured, one row per case and file, and a B/A ratio row when two
// files are compared. Internal to html_report.cpp.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/html_report.hpp"

namespace axon_bench {

/// The color of result file `input` in tables and plots (A blue, B orange, ...).
const char* report_color(std::size_t input);
/// "A", "B", ...
std::string report_letter(std::size_t input);

/// What identifies a case across two runs: mode, pattern, transport,
/// serializer, message, payload, touch, rate, topic, component, subscribers.
std::string report_key(const CaseResult& c);

/// Cases of one kind in every input, matched by key, in first-seen order.
struct ReportRow {
  std::string key;
  std::vector<const CaseResult*> per_input;  ///< nullptr where an input lacks the case.
};

template <class Filter>
std::vector<ReportRow> report_rows(const std::vector<ReportInput>& inputs, Filter wanted) {
  std::vector<ReportRow> rows;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (const auto& c : inputs[i].log.cases) {
      if (!wanted(c)) {
        continue;
      }
      const std::string key = report_key(c);
      auto found = index.find(key);
      if (found == index.end()) {
        found = index.emplace(key, rows.size()).first;
        rows.push_back({key, std::vector<const CaseResult*>(inputs.size(), nullptr)});
      }
      rows[found->second].per_input[i] = &c;
    }
  }
  return rows;
}

/// A table with a row per case and input, plus a B/A ratio row for
/// numeric columns when two inputs have the case.
struct ReportColumn {
  std::string title;
  std::function<std::string(const CaseResult&)> text;
  std::function<std::optional<double>(const CaseResult&)> value;  ///< For the ratio row; may be empty.
};

std::string table_html(const std::vector<ReportInput>& inputs, const std::vector<ReportRow>& rows,
                       std::vector<ReportColumn> columns);

std::vector<ReportColumn> latency_columns();
std::vector<ReportColumn> throughput_columns();
std::vector<ReportColumn> scenario_columns();
std::vector<ReportColumn> cpu_columns();

}  // namespace axon_bench
