#include "tests/support/child_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#include "tests/support/common/error_text.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace axon::test {

ChildProcess ChildProcess::spawn(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe2 failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  ChildProcess child;
  const int err = ::posix_spawn(&child.pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (err != 0) {
    ::close(fds[0]);
    throw std::runtime_error("posix_spawn failed: " + error_text(err));
  }
  child.stdout_fd_ = fds[0];
  return child;
}

ChildProcess ChildProcess::spawn(const std::vector<std::string>& argv, const ChildSetup& setup) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  return fork_and_run([&]() -> int {
    if (const std::string error = setup(); !error.empty()) {
      std::printf("ERROR %s\n", error.c_str());
      return 127;
    }
    std::fflush(stdout);
    ::execv(args[0], args.data());
    std::printf("ERROR exec %s: %s\n", args[0], error_text(errno).c_str());
    return 127;
  });
}

ChildProcess ChildProcess::fork_and_run(const std::function<int()>& body) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe2 failed");
  }
  std::fflush(nullptr);  // the child must not print the parent's buffered output again
  ChildProcess child;
  child.pid_ = ::fork();
  if (child.pid_ < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("fork failed: " + error_text(errno));
  }
  if (child.pid_ == 0) {
    ::dup2(fds[1], STDOUT_FILENO);  // the copy is not close-on-exec
    // A test killed by its timeout takes its children along (they would
    // otherwise keep a virtual host's namespace alive).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    int status = 126;
    try {
      status = body();
    } catch (const std::exception& e) {
      std::printf("ERROR %s\n", e.what());
    } catch (...) {
      std::printf("ERROR unknown exception\n");
    }
    std::fflush(nullptr);
    ::_exit(status);  // no atexit handlers or static destructors of the parent's copy
  }
  ::close(fds[1]);
  child.stdout_fd_ = fds[0];
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      stdout_fd_(std::exchange(other.stdout_fd_, -1)),
      buffer_(std::move(other.buffer_)),
      output_(std::move(other.output_)),
      reaped_(std::exchange(other.reaped_, true)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  std::swap(pid_, other.pid_);
  std::swap(stdout_fd_, other.stdout_fd_);
  std::swap(buffer_, other.buffer_);
  std::swap(output_, other.output_);
  std::swap(reaped_, other.reaped_);
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  if (stdout_fd_ >= 0) {
    ::close(stdout_fd_);
  }
}

std::optional<std::string> ChildProcess::wait_for_line(const std::string& prefix, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    for (auto pos = buffer_.find('\n'); pos != std::string::npos; pos = buffer_.find('\n')) {
      std::string line = buffer_.substr(0, pos);
      buffer_.erase(0, pos + 1);
      if (line.rfind(prefix, 0) == 0) {
        return line;
      }
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || stdout_fd_ < 0) {
      return std::nullopt;
    }
    pollfd pfd{.fd = stdout_fd_, .events = POLLIN, .revents = 0};
    if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) {
      continue;
    }
    char chunk[4096];
    const ssize_t n = ::read(stdout_fd_, chunk, sizeof(chunk));
    if (n <= 0) {
      ::close(stdout_fd_);
      stdout_fd_ = -1;
      continue;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
    output_.append(chunk, static_cast<std::size_t>(n));
  }
}

int ChildProcess::wait(std::chrono::milliseconds timeout) {
  if (reaped_) {
    return -1;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    // Keep draining stdout so a chatty child never blocks on a full pipe.
    wait_for_line("\x01never", std::chrono::milliseconds(0));
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      wait_for_line("\x01never", std::chrono::milliseconds(50));
      if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
      }
      return 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void ChildProcess::kill(int signal) const { ::kill(pid_, signal); }

std::string peer_path() { return AXON_TEST_PEER; }

std::uint32_t unique_domain() {
  static std::atomic<std::uint32_t> counter{0};
  // pid < 2^22 on Linux (pid_max): pid * 1024 + n fits 32 bits and never
  // meets another process's range.
  return static_cast<std::uint32_t>(::getpid()) * 1024U + counter.fetch_add(1) % 1024U;
}

namespace {

/// Whether process `pid` is stopped: the state letter after "pid (name)" in
/// /proc/<pid>/stat is 'T'.
bool is_stopped(pid_t pid) {
  std::FILE* stat = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "re");
  if (stat == nullptr) {
    return false;
  }
  char line[512] = {};
  const std::size_t read = std::fread(line, 1, sizeof(line) - 1, stat);
  std::fclose(stat);
  const std::string_view text(line, read);
  const std::size_t end = text.rfind(')');
  return end != std::string_view::npos && end + 2 < text.size() && text[end + 2] == 'T';
}

}  // namespace

bool ChildProcess::stop(std::chrono::milliseconds timeout) const {
  kill(SIGSTOP);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!is_stopped(pid_)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

std::vector<std::string> domain_files(std::uint32_t domain, const std::string& dir) {
  std::vector<std::string> files;
  const std::string registry = "axon_d" + std::to_string(domain) + "_";
  const std::string lock = "axon_d" + std::to_string(domain) + ".lock";
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind(registry, 0) == 0 || name == lock) {
        files.push_back(name);
      }
    }
    ::closedir(d);
  }
  return files;
}

}  // namespace axon::test
