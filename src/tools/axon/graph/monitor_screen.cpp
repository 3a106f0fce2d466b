#include "src/tools/axon/graph/monitor_screen.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "src/tools/axon/doctor/check.hpp"
#include "src/tools/axon/json_writer.hpp"
#include "src/tools/axon/text_table.hpp"

namespace axon::tools {
namespace {

// ANSI/VT100 sequences every terminal emulator in use understands (top and less use the same ones).
constexpr const char* kEnterAlternateScreen = "\x1b[?1049h";
constexpr const char* kLeaveAlternateScreen = "\x1b[?1049l";
constexpr const char* kHideCursor = "\x1b[?25l";
constexpr const char* kShowCursor = "\x1b[?25h";
constexpr const char* kHomeAndClear = "\x1b[H\x1b[2J";

std::string rate_text(double value) { return value < 0 ? "-" : fmt::format("{:.1f}", value); }

std::string bandwidth_text(double bytes_per_s) {
  return bytes_per_s < 0 ? "-" : doctor::format_bytes(static_cast<std::uint64_t>(std::llround(bytes_per_s))) + "/s";
}

std::string us_text(std::int64_t ns) { return ns < 0 ? "-" : fmt::format("{:.2f}", static_cast<double>(ns) / 1e3); }

std::string notes_text(const Round& round) {
  std::string text;
  for (const std::string& note : round.notes) {
    text += "note: " + note + "\n";
  }
  return text;
}

void nullable(JsonWriter& json, const char* name, double value) {
  json.key(name);
  if (value < 0) {
    json.null_value();
  } else {
    json.value(value);
  }
}

}  // namespace

std::string monitor_table(const Round& round, std::size_t max_rows) {
  if (round.topics.empty()) {
    return "no topics\n";
  }
  TextTable table({"TOPIC", "PUB", "SUB", "RATE_HZ", "BANDWIDTH", "P50_US", "P99_US", "DELIVERED/S", "DROPPED/S",
                   "QUEUED", "FULLEST"});
  for (std::size_t column = 1; column < 11; ++column) {
    table.set_align(column, Align::kRight);
  }
  const std::size_t shown = max_rows == 0 ? round.topics.size() : std::min(max_rows, round.topics.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const TopicRound& t = round.topics[i];
    table.add_row({t.name, std::to_string(t.publishers), std::to_string(t.subscribers), rate_text(t.rate_hz),
                   bandwidth_text(t.bytes_per_s), us_text(t.p50_ns), us_text(t.p99_ns), rate_text(t.delivered_per_s),
                   rate_text(t.dropped_per_s), std::to_string(t.queued),
                   t.fullest_depth == 0 ? "-" : fmt::format("{}/{}", t.fullest_queued, t.fullest_depth)});
  }
  std::string text = table.render();
  if (shown < round.topics.size()) {
    text += fmt::format("... and {} more topics (a taller window shows them)\n", round.topics.size() - shown);
  }
  return text;
}

std::string monitor_pipe_text(const Round& round) {
  return fmt::format("t={:.1f}s\n", round.at_s) + monitor_table(round) + notes_text(round) + "\n";
}

std::string monitor_screen_text(const Round& round, const ScreenHeader& header, std::size_t rows) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  char clock[16] = "?";
  (void)std::strftime(clock, sizeof(clock), "%H:%M:%S", &local);
  std::string text = fmt::format("axon monitor - domain {} - {} - every {:g} s - sorted by {}{}\n\n", header.domain_id,
                                 clock, header.interval_s, sort_word(header.sort),
                                 header.keys ? " (keys n r b p d u sort, q quits)" : " (Ctrl-C quits)");
  const std::string notes = notes_text(round);
  const auto note_lines = static_cast<std::size_t>(std::count(notes.begin(), notes.end(), '\n'));
  // Lines left for topics: the screen less the header and its blank line, the table's header, the "more" line
  // and the notes; at least one topic however small the window.
  std::size_t max_rows = 0;
  if (rows > 0) {
    const std::size_t used = 2 + 1 + 1 + note_lines;
    max_rows = rows > used + 1 ? rows - used : 1;
  }
  return text + monitor_table(round, max_rows) + notes;
}

std::string monitor_json(std::uint32_t domain_id, MonitorSort sort, const std::vector<Round>& rounds) {
  JsonWriter json;
  json.begin_object().member("domain", domain_id).member("sort", sort_word(sort)).key("rounds").begin_array();
  for (const Round& round : rounds) {
    json.begin_object().member("t_s", round.at_s).key("topics").begin_array();
    for (const TopicRound& t : round.topics) {
      json.begin_object()
          .member("name", t.name)
          .member("publishers", t.publishers)
          .member("subscribers", t.subscribers);
      // Not measured yet: null, not a made-up zero.
      nullable(json, "rate_hz", t.rate_hz);
      nullable(json, "bandwidth_bytes_per_s", t.bytes_per_s);
      nullable(json, "delivered_per_s", t.delivered_per_s);
      nullable(json, "dropped_per_s", t.dropped_per_s);
      json.member("queued", t.queued);
      for (const auto& [name, ns] : {std::pair{"latency_p50_ns", t.p50_ns}, std::pair{"latency_p99_ns", t.p99_ns}}) {
        json.key(name);
        if (ns < 0) {
          json.null_value();
        } else {
          json.value(ns);
        }
      }
      json.key("fullest_queue");
      if (t.fullest_depth == 0) {
        json.null_value();
      } else {
        json.begin_object().member("queued", t.fullest_queued).member("depth", t.fullest_depth).end_object();
      }
      json.end_object();
    }
    json.end_array().key("notes").begin_array();
    for (const std::string& note : round.notes) {
      json.value(note);
    }
    json.end_array().end_object();
  }
  json.end_array().end_object();
  return json.text();
}

TerminalScreen::TerminalScreen(std::FILE* out) : out_(out) {
  termios settings{};
  if (::isatty(STDIN_FILENO) == 1 && ::tcgetattr(STDIN_FILENO, &settings) == 0) {
    termios keys = settings;
    keys.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);  // each key at once, not echoed; Ctrl-C still signals
    keys.c_cc[VMIN] = 0;                                    // read() returns at once, with or without a key
    keys.c_cc[VTIME] = 0;
    if (::tcsetattr(STDIN_FILENO, TCSANOW, &keys) == 0) {
      saved_input_ = settings;
    }
  }
  std::fputs(kEnterAlternateScreen, out_);
  std::fputs(kHideCursor, out_);
  std::fflush(out_);
}

TerminalScreen::~TerminalScreen() {
  std::fputs(kShowCursor, out_);
  std::fputs(kLeaveAlternateScreen, out_);
  std::fflush(out_);
  if (saved_input_) {
    (void)::tcsetattr(STDIN_FILENO, TCSANOW, &*saved_input_);
  }
}

void TerminalScreen::draw(const std::string& text) {
  std::fputs(kHomeAndClear, out_);
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
}

std::size_t TerminalScreen::rows() const {
  winsize size{};
  return ::ioctl(::fileno(out_), TIOCGWINSZ, &size) == 0 ? size.ws_row : 0;
}

std::optional<char> TerminalScreen::key() const {
  char c = 0;
  if (!saved_input_ || ::read(STDIN_FILENO, &c, 1) != 1) {
    return std::nullopt;
  }
  return c;
}

}  // namespace axon::tools
