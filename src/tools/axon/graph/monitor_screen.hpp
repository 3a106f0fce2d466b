// How `axon monitor` prints its looks: a table per look over a pipe, one screen redrawn in place on a terminal
// (like top), or one JSON document at the end; and the terminal's state while it draws there.
#pragma once

#include <termios.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "src/tools/axon/graph/monitor_round.hpp"

namespace axon::tools {

/// The table of one look; at most `max_rows` topics (0: all), then a line that says how many more there are.
[[nodiscard]] std::string monitor_table(const Round& round, std::size_t max_rows = 0);

/// Over a pipe: "t=<seconds>s", the table, the notes, a blank line.
[[nodiscard]] std::string monitor_pipe_text(const Round& round);

/// What the first line of the terminal screen says besides the look.
struct ScreenHeader {
  std::uint32_t domain_id = 0;
  double interval_s = 0;
  MonitorSort sort = MonitorSort::kName;
  bool keys = false;  ///< The keys that change the sort work (stdin is a terminal).
};

/// On a terminal: the header line (domain, wall-clock time, refresh interval, sort), the table and the notes,
/// cut to `rows` lines (0: not cut).
[[nodiscard]] std::string monitor_screen_text(const Round& round, const ScreenHeader& header, std::size_t rows);

/// With --json: every look, in one document.
[[nodiscard]] std::string monitor_json(std::uint32_t domain_id, MonitorSort sort, const std::vector<Round>& rounds);

/// While it lives, `out` (a terminal) shows the alternate screen with the cursor hidden, and stdin, when it is a
/// terminal, gives each key as it is pressed without echoing it; the destructor puts both back as they were (on
/// Ctrl-C too: StopOnSignals lets the monitor end normally). Not thread-safe.
class TerminalScreen {
 public:
  explicit TerminalScreen(std::FILE* out);
  ~TerminalScreen();
  TerminalScreen(const TerminalScreen&) = delete;
  TerminalScreen& operator=(const TerminalScreen&) = delete;
  TerminalScreen(TerminalScreen&&) = delete;
  TerminalScreen& operator=(TerminalScreen&&) = delete;

  /// Homes the cursor, clears the screen and writes `text`.
  void draw(const std::string& text);
  /// The screen's height in lines (0 when the terminal does not say).
  [[nodiscard]] std::size_t rows() const;
  /// Keys come one by one from stdin (a terminal).
  [[nodiscard]] bool reads_keys() const noexcept { return saved_input_.has_value(); }
  /// The next key pressed, without waiting; nothing when none was.
  [[nodiscard]] std::optional<char> key() const;

 private:
  std::FILE* out_;
  std::optional<termios> saved_input_;  ///< stdin's settings before, when it is a terminal.
};

}  // namespace axon::tools
