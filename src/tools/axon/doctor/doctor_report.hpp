// axon doctor's output: the checklist as a table with the fixes below it, or as one JSON document.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "src/tools/axon/doctor/check.hpp"

namespace axon::tools::doctor {

struct Summary {
  std::size_t passed = 0;
  std::size_t warnings = 0;
  std::size_t failed = 0;
  std::size_t skipped = 0;
};

[[nodiscard]] Summary summarize(const std::vector<CheckResult>& results) noexcept;

/// A table of status, check and what was found, then "fix <check>: ..." for each WARN and FAIL, then the counts.
[[nodiscard]] std::string render_text(const std::vector<CheckResult>& results);

/// {"checks":[{"name","status","found","fix"}...],"passed":N,"warnings":N,"failed":N,"skipped":N}, one line.
[[nodiscard]] std::string render_json(const std::vector<CheckResult>& results);

}  // namespace axon::tools::doctor
