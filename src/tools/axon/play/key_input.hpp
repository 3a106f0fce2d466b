// The keys `axon play` reacts to (space: pause or resume; s or the right arrow: publish the next message while
// paused), read from stdin without waiting for Enter. On a terminal, stdin is put in non-canonical mode without
// echo for the object's life, and restored when it ends and on the signals that end the process (SIGHUP,
// SIGQUIT, SIGABRT, SIGSEGV: restored, then the signal's default action; SIGINT and SIGTERM end the replay
// through StopOnSignals, and the destructor restores). Ctrl-C still sends SIGINT (ISIG stays on).
#pragma once

#include <termios.h>

#include <chrono>
#include <string>

namespace axon::tools {

enum class Key { kNone, kTogglePause, kStep };

/// Thread safety: one object per process at a time, used by one thread.
class KeyInput {
 public:
  /// Reads keys from stdin when it is a terminal, or when `read_pipe` (--paused given: a pipe can drive it too).
  explicit KeyInput(bool read_pipe);
  ~KeyInput();
  KeyInput(const KeyInput&) = delete;
  KeyInput& operator=(const KeyInput&) = delete;
  KeyInput(KeyInput&&) = delete;
  KeyInput& operator=(KeyInput&&) = delete;

  /// stdin is read for keys (a terminal, or a pipe that --paused asked for and that is not at its end).
  [[nodiscard]] bool active() const noexcept { return fd_ >= 0; }
  [[nodiscard]] bool terminal() const noexcept { return terminal_; }
  /// The next key typed, waiting at most `timeout` for one (zero: a look only).
  [[nodiscard]] Key poll(std::chrono::milliseconds timeout);

 private:
  /// The first whole key in pending_, consumed (bytes that are no key are dropped).
  Key parse();
  int fd_ = -1;
  bool terminal_ = false;
  std::string pending_;  // bytes read but not yet a whole key (an escape sequence cut short)
};

}  // namespace axon::tools
