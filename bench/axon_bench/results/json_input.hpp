// Reads the JSON that axon-bench writes (result_log.hpp) back into a ResultLog,
// for `axon-bench report` and --report. JSON is parsed with yaml-cpp (JSON
// is YAML 1.2 flow style), which axon-bench links for scenario files anyway.
#pragma once

#include <string>

#include "results/result_log.hpp"

namespace axon_bench {

/// Parses the JSON `text` of a result file; `source` names it in errors.
/// Throws std::runtime_error ("SOURCE: ...") when it is not one.
ResultLog parse_results_json(const std::string& text, const std::string& source);

/// Reads and parses the result file `path`. Throws std::runtime_error.
ResultLog read_results_json(const std::string& path);

}  // namespace axon_bench
