#include "src/tools/axon/doctor/cpu_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace axon::tools::doctor {
namespace {

constexpr unsigned kMaxCpus = 1U << 16U;  // beyond any kernel's NR_CPUS: refuses nonsense before it allocates

std::optional<unsigned> parse_cpu(std::string_view text) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value >= kMaxCpus) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::optional<std::vector<unsigned>> parse_cpu_list(std::string_view text) {
  std::vector<unsigned> cpus;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const auto dash = item.find('-');
    const auto first = parse_cpu(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : parse_cpu(item.substr(dash + 1));
    if (!first || !last || *last < *first) {
      return std::nullopt;
    }
    for (unsigned cpu = *first; cpu <= *last; ++cpu) {
      cpus.push_back(cpu);
    }
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string format_cpu_list(const std::vector<unsigned>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t end = i;
    while (end + 1 < cpus.size() && cpus[end + 1] == cpus[end] + 1) {
      ++end;
    }
    out += out.empty() ? "" : ",";
    if (end > i) {
      out += fmt::format("{}-{}", cpus[i], cpus[end]);
      i = end + 1;
    } else {
      out += fmt::format("{}", cpus[i]);
      ++i;
    }
  }
  return out;
}

}  // namespace axon::tools::doctor
