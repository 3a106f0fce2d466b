#include "src/tools/axon/doctor/doctor_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "src/tools/axon/json_writer.hpp"
#include "src/tools/axon/text_table.hpp"

namespace axon::tools::doctor {
namespace {

std::string upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); });
  return out;
}

}  // namespace

Summary summarize(const std::vector<CheckResult>& results) noexcept {
  Summary summary;
  for (const auto& result : results) {
    switch (result.status) {
      case Status::kPass: ++summary.passed; break;
      case Status::kWarn: ++summary.warnings; break;
      case Status::kFail: ++summary.failed; break;
      case Status::kSkip: ++summary.skipped; break;
    }
  }
  return summary;
}

std::string render_text(const std::vector<CheckResult>& results) {
  TextTable table({"STATUS", "CHECK", "FOUND"});
  for (const auto& result : results) {
    table.add_row({upper(to_string(result.status)), result.name, result.found});
  }
  std::string out = table.render();
  bool first_fix = true;
  for (const auto& result : results) {
    if (!result.fix.empty()) {
      out += first_fix ? "\n" : "";
      first_fix = false;
      out += fmt::format("fix {}: {}\n", result.name, result.fix);
    }
  }
  const Summary summary = summarize(results);
  out += fmt::format("\n{} checks: {} passed, {} warnings, {} failed, {} skipped\n", results.size(), summary.passed,
                     summary.warnings, summary.failed, summary.skipped);
  return out;
}

std::string render_json(const std::vector<CheckResult>& results) {
  JsonWriter json;
  json.begin_object().key("checks").begin_array();
  for (const auto& result : results) {
    json.begin_object()
        .member("name", result.name)
        .member("status", to_string(result.status))
        .member("found", result.found)
        .member("fix", result.fix)
        .end_object();
  }
  json.end_array();
  const Summary summary = summarize(results);
  json.member("passed", summary.passed)
      .member("warnings", summary.warnings)
      .member("failed", summary.failed)
      .member("skipped", summary.skipped)
      .end_object();
  return json.text();
}

}  // namespace axon::tools::doctor
