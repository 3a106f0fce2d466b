// The progress line (progress_line.hpp).
#include "src/tools/axon/record/progress_line.hpp"

#include <unistd.h>

namespace axon::tools {

std::string progress_text(const RecordStats& now, const RecordStats& previous) {
  const double seconds = now.seconds - previous.seconds;
  const double rate_mb_s =
      seconds > 0 ? static_cast<double>(now.payload_bytes - previous.payload_bytes) / 1e6 / seconds : 0.0;
  char text[200];
  std::snprintf(text, sizeof(text), "recording %zu topic%s: %llu msgs, %.1f MB, %.1f MB/s, %llu lost, %.0f s",
                now.topics.size(), now.topics.size() == 1 ? "" : "s", static_cast<unsigned long long>(now.messages),
                static_cast<double>(now.file_bytes) / 1e6, rate_mb_s, static_cast<unsigned long long>(now.lost),
                now.seconds);
  return text;
}

ProgressLine::ProgressLine(std::FILE* out) : out_(out), enabled_(::isatty(::fileno(out)) == 1) {}

void ProgressLine::show(const RecordStats& stats) {
  if (!enabled_) {
    return;
  }
  // "\33[K" clears what a longer line before left.
  std::fprintf(out_, "\r%s\33[K", progress_text(stats, previous_).c_str());
  std::fflush(out_);
  previous_ = stats;
  shown_ = true;
}

void ProgressLine::finish() {
  if (shown_) {
    std::fprintf(out_, "\n");
    shown_ = false;
  }
}

}  // namespace axon::tools
