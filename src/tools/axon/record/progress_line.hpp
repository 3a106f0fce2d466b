// The line `axon record` keeps refreshed on a terminal: topics, messages, megabytes, the rate over the last
// refresh and the messages lost ("\r" then the line, on stderr). Nothing when stderr is not a terminal.
//
// Thread safety: none (the recorder's thread). Allocates a little per refresh.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "src/tools/axon/record/recorder.hpp"

namespace axon::tools {

/// The text of one refresh: `previous` is the figures of the refresh before (for the rate).
[[nodiscard]] std::string progress_text(const RecordStats& now, const RecordStats& previous);

class ProgressLine {
 public:
  /// Shows the line only when `out` is a terminal.
  explicit ProgressLine(std::FILE* out);
  [[nodiscard]] bool enabled() const noexcept { return enabled_; }
  void show(const RecordStats& stats);
  /// Ends the line (a newline) when one was shown.
  void finish();

 private:
  std::FILE* out_;
  bool enabled_ = false;
  bool shown_ = false;
  RecordStats previous_;
};

}  // namespace axon::tools
