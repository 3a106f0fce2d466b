#include "src/tools/axon/play/key_input.hpp"

#include <poll.h>
#include <unistd.h>

#include <csignal>
#include <string_view>

namespace axon::tools {
namespace {

// The terminal's settings before play changed them, for the signal handler: written before g_saved_valid is set
// and never again while it is; sig_atomic_t and volatile, as a handler may read it at any point.
termios g_saved{};
volatile std::sig_atomic_t g_saved_valid = 0;

constexpr int kFatalSignals[] = {SIGHUP, SIGQUIT, SIGABRT, SIGSEGV};

// Static: a C-linkage name ignores the unnamed namespace, and a program linking the tools may have one like it.
extern "C" {
static void play_restore_terminal_and_die(int signal) {
  if (g_saved_valid != 0) {
    (void)::tcsetattr(STDIN_FILENO, TCSANOW, &g_saved);  // async-signal-safe
  }
  std::signal(signal, SIG_DFL);
  (void)std::raise(signal);
}
}

}  // namespace

KeyInput::KeyInput(bool read_pipe) {
  if (::isatty(STDIN_FILENO) == 1) {
    termios mode{};
    if (::tcgetattr(STDIN_FILENO, &mode) != 0) {
      return;
    }
    g_saved = mode;
    g_saved_valid = 1;
    for (const int signal : kFatalSignals) {
      std::signal(signal, play_restore_terminal_and_die);
    }
    mode.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    mode.c_cc[VMIN] = 0;
    mode.c_cc[VTIME] = 0;
    (void)::tcsetattr(STDIN_FILENO, TCSANOW, &mode);
    fd_ = STDIN_FILENO;
    terminal_ = true;
  } else if (read_pipe) {
    fd_ = STDIN_FILENO;
  }
}

KeyInput::~KeyInput() {
  if (terminal_) {
    (void)::tcsetattr(STDIN_FILENO, TCSANOW, &g_saved);
    g_saved_valid = 0;
    for (const int signal : kFatalSignals) {
      std::signal(signal, SIG_DFL);
    }
  }
}

Key KeyInput::parse() {
  while (!pending_.empty()) {
    constexpr std::string_view kRightArrow = "\x1b[C";
    if (pending_.starts_with(kRightArrow)) {
      pending_.erase(0, kRightArrow.size());
      return Key::kStep;
    }
    if (kRightArrow.starts_with(pending_)) {
      return Key::kNone;  // the rest of the sequence comes with a later read
    }
    const char c = pending_[0];
    pending_.erase(0, 1);
    if (c == ' ') {
      return Key::kTogglePause;
    }
    if (c == 's' || c == 'S') {
      return Key::kStep;
    }
  }
  return Key::kNone;
}

Key KeyInput::poll(std::chrono::milliseconds timeout) {
  if (const Key key = parse(); key != Key::kNone || fd_ < 0) {
    return key;
  }
  pollfd in{.fd = fd_, .events = POLLIN, .revents = 0};
  if (::poll(&in, 1, static_cast<int>(timeout.count())) <= 0) {
    return Key::kNone;
  }
  char bytes[16];
  const ssize_t got = ::read(fd_, bytes, sizeof(bytes));
  if (got == 0 && !terminal_) {
    fd_ = -1;  // the pipe's end: no more keys
  }
  if (got > 0) {
    pending_.append(bytes, static_cast<std::size_t>(got));
  }
  return parse();
}

}  // namespace axon::tools
