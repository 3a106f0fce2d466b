// Plain-text tables for the terminal: columns right-aligned except the first.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "results/result_log.hpp"

namespace axon_bench {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::FILE* out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

/// "64 B", "2 KiB", "1 MiB".
std::string format_bytes(std::uint64_t bytes);

/// Nanoseconds as microseconds with three decimals ("0.312").
std::string format_us(double ns);

/// printf-style formatting into a std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/// The latency table of `cases`: payload, mode, samples, mean, stddev,
/// percentiles (µs), ratio to the raw cache-line p50 and CPU use.
void print_latency_table(std::FILE* out, std::span<const CaseResult> cases);

}  // namespace axon_bench
