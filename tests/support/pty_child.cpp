#include "tests/support/pty_child.hpp"

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <thread>

namespace axon::test {

PtyChild PtyChild::spawn(const std::vector<std::string>& argv, unsigned short columns, unsigned short rows) {
  // Built before the fork: the child only execs.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  winsize size{};
  size.ws_col = columns;
  size.ws_row = rows;
  PtyChild child;
  child.pid_ = ::forkpty(&child.master_fd_, nullptr, nullptr, &size);
  if (child.pid_ < 0) {
    throw std::runtime_error("forkpty failed");
  }
  if (child.pid_ == 0) {
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return child;
}

PtyChild::PtyChild(PtyChild&& other) noexcept
    : pid_(other.pid_), master_fd_(other.master_fd_), output_(std::move(other.output_)), reaped_(other.reaped_) {
  other.pid_ = -1;
  other.master_fd_ = -1;
  other.reaped_ = true;
}

PtyChild::~PtyChild() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  if (master_fd_ >= 0) {
    ::close(master_fd_);
  }
}

bool PtyChild::read_some(std::chrono::milliseconds timeout) {
  pollfd p{.fd = master_fd_, .events = POLLIN, .revents = 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) {
    return true;  // nothing yet
  }
  char buffer[4096];
  const ssize_t n = ::read(master_fd_, buffer, sizeof(buffer));
  if (n > 0) {
    output_.append(buffer, static_cast<std::size_t>(n));
    return true;
  }
  // EIO: every process closed the terminal's other side (Linux's end of output on a pty).
  return n < 0 && errno == EINTR;
}

bool PtyChild::read_until(const std::function<bool(const std::string&)>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done(output_)) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !read_some(std::min(left, std::chrono::milliseconds(50)))) {
      return done(output_);
    }
  }
  return true;
}

void PtyChild::type(const std::string& keys) const { (void)!::write(master_fd_, keys.data(), keys.size()); }

int PtyChild::wait(std::chrono::milliseconds timeout) {
  if (reaped_) {
    return -1;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool open = true;
  for (;;) {
    // Keep reading: a child blocked on a full terminal would never exit.
    open = open && read_some(std::chrono::milliseconds(open ? 20 : 0));
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      // What it wrote before it exited is still there to read, then the end of output.
      while (open) {
        pollfd p{.fd = master_fd_, .events = POLLIN, .revents = 0};
        if (::poll(&p, 1, 20) <= 0) {
          break;  // all read
        }
        open = read_some(std::chrono::milliseconds(0));
      }
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return -1;
    }
    if (!open) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

}  // namespace axon::test
