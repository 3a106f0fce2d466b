// Real child processes for multi-process tests: spawn a program with its
// stdout on a pipe, wait for a line with a timeout, kill, reap.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace axon::test {

/// Runs in a forked child before exec: "" to go on, else why the child
/// must not start (printed as "ERROR <why>" on its stdout; exit status 127).
using ChildSetup = std::function<std::string()>;

class ChildProcess {
 public:
  /// posix_spawn()s `argv[0]` with `argv`; stdout is captured, stderr inherited.
  static ChildProcess spawn(const std::vector<std::string>& argv);
  /// Like spawn(), but fork()s and runs `setup` in the child before exec
  /// (e.g. to enter a network namespace). Call it while the process has one
  /// thread: the child may allocate.
  static ChildProcess spawn(const std::vector<std::string>& argv, const ChildSetup& setup);
  /// fork()s a child that runs `body` with its stdout captured and exits
  /// with what `body` returns (exceptions: 126); it is killed when this
  /// thread ends. Same thread rule as above.
  static ChildProcess fork_and_run(const std::function<int()>& body);
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  /// Kills (SIGKILL) and reaps a child that is still running.
  ~ChildProcess();

  /// Reads stdout until a line starting with `prefix`; returns that line,
  /// or nullopt on timeout or end of output.
  std::optional<std::string> wait_for_line(const std::string& prefix, std::chrono::milliseconds timeout);
  /// Waits for exit; returns the exit code, 128+signal when killed, -1 on timeout.
  int wait(std::chrono::milliseconds timeout);
  void kill(int signal) const;
  /// SIGSTOP, then waits (at most `timeout`) until the kernel shows the
  /// child stopped: kill() returns before the stop takes effect.
  bool stop(std::chrono::milliseconds timeout) const;
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  /// Everything the child printed so far (read while waiting).
  [[nodiscard]] const std::string& output() const noexcept { return output_; }

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
  std::string output_;
  bool reaped_ = false;
};

/// Path of the test peer program (set by CMake as AXON_TEST_PEER).
std::string peer_path();

/// A domain id no other test process uses at the same time.
std::uint32_t unique_domain();

/// Files of `domain` left in /dev/shm (registry, lock, sockets).
std::vector<std::string> domain_files(std::uint32_t domain, const std::string& dir = "/dev/shm");

}  // namespace axon::test
