// A program run on a pseudo-terminal, as a user at a terminal runs it: its stdin, stdout and stderr are the
// terminal, whose screen size the test chooses; the test reads what it draws and types keys (Ctrl-C too).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace axon::test {

class PtyChild {
 public:
  /// forkpty()s and execs `argv` (argv[0] a path) on a new terminal of `columns` x `rows`. Call it before the
  /// test starts threads or after: the child calls only async-signal-safe functions before exec.
  static PtyChild spawn(const std::vector<std::string>& argv, unsigned short columns, unsigned short rows);
  PtyChild(PtyChild&& other) noexcept;
  PtyChild& operator=(PtyChild&&) = delete;
  PtyChild(const PtyChild&) = delete;
  PtyChild& operator=(const PtyChild&) = delete;
  /// Kills (SIGKILL) and reaps a child still running; closes the terminal.
  ~PtyChild();

  /// Reads what the child writes until `done(output())` says so (true) or `timeout` passes (false).
  bool read_until(const std::function<bool(const std::string&)>& done, std::chrono::milliseconds timeout);
  /// Types `keys` on the terminal ("\x03" is Ctrl-C: the terminal sends SIGINT).
  void type(const std::string& keys) const;
  /// Waits for exit while reading its output; the exit code, 128+signal when killed, -1 on timeout.
  int wait(std::chrono::milliseconds timeout);
  [[nodiscard]] const std::string& output() const noexcept { return output_; }
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

 private:
  PtyChild() = default;
  /// Reads what is there within `timeout`; false at the end of output (the child closed the terminal).
  bool read_some(std::chrono::milliseconds timeout);
  pid_t pid_ = -1;
  int master_fd_ = -1;
  std::string output_;
  bool reaped_ = false;
};

}  // namespace axon::test
