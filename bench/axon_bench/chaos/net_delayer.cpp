#include "chaos/net_delayer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "net_delay/delayer_protocol.hpp"
#include "tests/support/common/error_text.hpp"
#include "tests/support/common/run_command.hpp"

namespace axon_bench {
namespace {

using Clock = std::chrono::steady_clock;

/// Appends what `fd` has now (non-blocking) or, with `until_eof`, everything until the writer is gone.
void read_output(int fd, std::string& text, bool until_eof) {
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN && until_eof) {
      pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
      (void)::poll(&p, 1, 100);
    } else {
      return;  // EOF, or nothing more now
    }
  }
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

/// Waits at most `timeout_ms` for `pid`; then SIGKILLs and reaps it. Returns its wait status.
int wait_for(pid_t pid, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status;
}

std::string exit_text(int status) {
  return WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status))
                             : fmt::format("exited with status {}", WEXITSTATUS(status));
}

}  // namespace

std::string delayer_program_path() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) {
    return "";
  }
  const std::filesystem::path path = self.parent_path() / kDelayerProgram;
  return ::access(path.c_str(), X_OK) == 0 ? path.string() : "";
}

std::string start_delayer(const std::vector<std::string>& argv, int timeout_ms, DelayerProcess& out) {
  const std::string program = axon::test::find_program(argv.at(0));
  if (program.empty()) {
    return fmt::format("{} not found", argv[0]);
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));  // NOLINT(cppcoreguidelines-pro-type-const-cast): execv's type
  }
  args.push_back(nullptr);
  int pipe_fds[2] = {-1, -1};
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return fmt::format("pipe: {}", axon::test::error_text(errno));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return fmt::format("fork: {}", axon::test::error_text(errno));
  }
  if (pid == 0) {  // the child: only async-signal-safe calls until execv
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    ::execv(program.c_str(), args.data());
    constexpr char kFailed[] = "execv failed\n";
    (void)!::write(STDERR_FILENO, kFailed, sizeof(kFailed) - 1);
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  const int fd = pipe_fds[0];
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);

  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string said;
  bool ready = false;
  bool gone = false;
  while (!ready && !gone && Clock::now() < deadline) {
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    (void)::poll(&p, 1, 20);
    const std::size_t before = said.size();
    read_output(fd, said, false);
    ready = said.find(std::string(kDelayerReady) + " ") != std::string::npos;
    gone = (p.revents & POLLHUP) != 0 && said.size() == before;
  }
  if (ready) {
    out = {.pid = pid, .output_fd = fd};
    return "";
  }
  ::kill(pid, SIGKILL);  // a delayer that did not get ready holds no packet
  const int status = wait_for(pid, 1000);
  read_output(fd, said, true);
  ::close(fd);
  return fmt::format("`{}` {}: {}", axon::test::command_text(argv),
                     gone ? exit_text(status) : fmt::format("printed no READY in {} ms", timeout_ms),
                     said.empty() ? "(no output)" : trimmed(said));
}

DelayerExit stop_delayer(DelayerProcess& d, int timeout_ms) {
  DelayerExit exit;
  if (d.pid < 0) {
    return exit;
  }
  ::kill(d.pid, SIGTERM);
  const int status = wait_for(d.pid, timeout_ms);
  std::string said;
  read_output(d.output_fd, said, true);
  ::close(d.output_fd);
  const std::size_t counts = said.rfind(kDelayerCounts);
  if (counts != std::string::npos) {
    exit.counts = trimmed(said.substr(counts));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || exit.counts.empty()) {
    exit.error = fmt::format("the delayer (pid {}) {}: {}", d.pid, exit_text(status), trimmed(said));
  }
  d = {};
  return exit;
}

}  // namespace axon_bench
