// Durations on the soak's command line: "300" (seconds), "90s", "5m", "2h".
#pragma once

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

namespace axon_bench {

/// Seconds of `text`: a positive number with an optional unit s, m or h.
/// std::nullopt when it is not one.
inline std::optional<double> parse_duration_s(const std::string& text) {
  if (text.empty()) {
    return std::nullopt;
  }
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const std::string unit(end);
  const double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  if (end == text.c_str() || scale == 0 || !std::isfinite(value) || value <= 0) {
    return std::nullopt;
  }
  return value * scale;
}

}  // namespace axon_bench
