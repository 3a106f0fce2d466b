#include "results/table.hpp"

#include <algorithm>
#include <cstdarg>

namespace axon_bench {

void Table::print(std::FILE* out) const {
  std::vector<std::size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  };
  measure(header_);
  for (const auto& row : rows_) {
    measure(row);
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) {
      const int w = static_cast<int>(width[i]);
      if (i == 0) {
        std::fprintf(out, "%-*s", w, row[i].c_str());
      } else {
        std::fprintf(out, "  %*s", w, row[i].c_str());
      }
    }
    std::fprintf(out, "\n");
  };
  print_row(header_);
  std::size_t total = 0;
  for (const auto w : width) {
    total += w + 2;
  }
  std::fprintf(out, "%s\n", std::string(total > 2 ? total - 2 : 0, '-').c_str());
  for (const auto& row : rows_) {
    print_row(row);
  }
  std::fflush(out);
}

std::string format(const char* fmt, ...) {
  char buffer[256];
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  std::string out;
  if (n < 0) {
    va_end(again);
    return out;
  }
  if (static_cast<std::size_t>(n) < sizeof(buffer)) {
    out.assign(buffer, static_cast<std::size_t>(n));
  } else {
    out.resize(static_cast<std::size_t>(n) + 1);
    std::vsnprintf(out.data(), out.size(), fmt, again);
    out.resize(static_cast<std::size_t>(n));
  }
  va_end(again);
  return out;
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes >= (1U << 20) && bytes % (1U << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  if (bytes >= (1U << 10) && bytes % (1U << 10) == 0) {
    return std::to_string(bytes >> 10) + " KiB";
  }
  return std::to_string(bytes) + " B";
}

std::string format_us(double ns) { return format("%.3f", ns / 1000.0); }

void print_latency_table(std::FILE* out, std::span<const CaseResult> cases) {
  const bool any_raw64 =
      std::any_of(cases.begin(), cases.end(), [](const CaseResult& c) { return c.ratio_to_raw64_p50.has_value(); });
  std::vector<std::string> header = {"case", "payload", "samples", "mean",   "stddev", "p50",
                                     "p90",  "p99",     "p99.9",   "p99.99", "max",    "x raw p50"};
  if (any_raw64) {
    header.emplace_back("x 64B p50");
  }
  header.emplace_back("cpu% tx/rx");
  Table table(header);
  for (const auto& c : cases) {
    const auto& l = c.latency;
    std::string cpu = "-";
    if (c.cpu_percent_sender && c.cpu_percent_receiver) {
      cpu = format("%.0f/%.0f", *c.cpu_percent_sender, *c.cpu_percent_receiver);
    }
    std::string name;
    if (c.benchmark == "baseline" || c.message.empty()) {
      // The payload has a column of its own.
      name = c.transport + " " + c.mode + (c.touch ? " touch" : "") +
             (c.rate_hz > 0 ? format(" @%.0f Hz", c.rate_hz) : "");
    } else {
      name = c.serializer + " " + c.message;
    }
    std::vector<std::string> row = {name,
                                    format_bytes(c.payload_bytes),
                                    std::to_string(l.samples),
                                    format_us(l.mean_ns),
                                    format_us(l.stddev_ns),
                                    format_us(l.p50_ns),
                                    format_us(l.p90_ns),
                                    format_us(l.p99_ns),
                                    format_us(l.p999_ns),
                                    format_us(l.p9999_ns),
                                    format_us(l.max_ns),
                                    c.ratio_to_raw_p50 ? format("%.2f", *c.ratio_to_raw_p50) : "-"};
    if (any_raw64) {
      row.push_back(c.ratio_to_raw64_p50 ? format("%.2f", *c.ratio_to_raw64_p50) : "-");
    }
    row.push_back(cpu);
    table.add_row(std::move(row));
  }
  std::fprintf(out, "one-way latency in microseconds (round trips halved); x raw p50 = p50 / raw cache-line p50%s\n",
               any_raw64 ? "; x 64B p50 = p50 / the 64 B raw struct's p50" : "");
  table.print(out);
}

}  // namespace axon_bench
