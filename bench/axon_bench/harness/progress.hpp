// The progress line axon-bench shows on stderr while a long case runs:
// "  latency 1 MiB oneway: 1200/2000 samples (60%), 3.1 s". Shown only when
// stderr is a terminal and --quiet was not given, so logs and pipes stay clean.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace axon_bench {

/// main() calls this once: false for --quiet. The line is shown only when
/// this was true and stderr is a terminal.
void set_progress_wanted(bool wanted) noexcept;

/// --quiet: no progress line and no per-case lines on stderr (the tables
/// and errors still print).
[[nodiscard]] bool quiet() noexcept;

/// Whether progress lines are shown in this run.
[[nodiscard]] bool progress_enabled() noexcept;

/// One progress line, redrawn in place. Thread safety: one thread.
class ProgressLine {
 public:
  /// `total` units of work called `unit` ("samples", "s"); 0 shows only
  /// the elapsed time.
  ProgressLine(std::string label, std::uint64_t total, std::string unit);
  ~ProgressLine();  ///< Clears the line.
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// Redraws the line with `done` units done (at most every 100 ms).
  void update(std::uint64_t done);

 private:
  std::string label_;
  std::uint64_t total_;
  std::string unit_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace axon_bench
