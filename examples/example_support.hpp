// Process plumbing shared by the demo executables: the command line, stopping
// on SIGINT/SIGTERM, the clock and error messages. Nothing here is axon API.
#pragma once

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string_view>

#include "axon/result.hpp"

namespace examples {

constexpr std::int64_t kNsPerSecond = 1'000'000'000;

/// CLOCK_MONOTONIC, the clock axon stamps SampleInfo::publish_time_ns with.
inline std::int64_t monotonic_now_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * kNsPerSecond + ts.tv_nsec;
}

/// Sleeps until CLOCK_MONOTONIC reaches `deadline_ns`. Returns early (false)
/// when a signal arrives, so the caller can look at its stop flag.
inline bool sleep_until_ns(std::int64_t deadline_ns) noexcept {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(deadline_ns / kNsPerSecond);
  ts.tv_nsec = static_cast<long>(deadline_ns % kNsPerSecond);
  // TIMER_ABSTIME: the deadline does not move with the time spent working,
  // so a periodic loop does not drift.
  return ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == 0;
}

/// Set by SIGINT or SIGTERM. A lock-free atomic is safe to write from a
/// signal handler; the handler may run on any thread (axon has its own).
inline std::atomic<bool> g_stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

inline void on_stop_signal(int /*signal*/) noexcept { g_stop_requested.store(true, std::memory_order_relaxed); }

/// Installs the SIGINT/SIGTERM handlers that set g_stop_requested. Without
/// SA_RESTART, a sleep in progress returns early.
inline void install_stop_handlers() noexcept {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

inline bool stop_requested() noexcept { return g_stop_requested.load(std::memory_order_relaxed); }

/// Prints "<what>: <axon's message> (<error code>)" to stderr.
inline void report_error(std::string_view what, const axon::Error& error) noexcept {
  const std::string_view message = error.message();
  const std::string_view code = axon::to_string(error.code());
  std::fprintf(stderr, "%.*s: %.*s (%.*s)\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(message.size()), message.data(), static_cast<int>(code.size()), code.data());
}

/// The demo's one option. `--duration SECONDS` (fractions allowed); absent
/// means run until Ctrl-C.
struct CommandLine {
  std::optional<double> duration_s;
};

/// Parses argv, or prints usage and exits (0 for --help, 2 for a mistake).
inline CommandLine parse_command_line(int argc, char** argv, std::string_view what) {
  const auto usage = [&](std::FILE* out, int code) {
    std::fprintf(out,
                 "usage: %s [--duration SECONDS]\n"
                 "  %.*s\n"
                 "  --duration SECONDS  stop after this long (default: run until Ctrl-C)\n"
                 "  The domain is AXON_DOMAIN (default 0); run both demo processes with the same one.\n",
                 argv[0], static_cast<int>(what.size()), what.data());
    std::exit(code);  // NOLINT(concurrency-mt-unsafe): single-threaded at this point
  };
  CommandLine cmd;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(stdout, 0);
    }
    std::string_view value;
    if (arg == "--duration" && i + 1 < argc) {
      value = argv[++i];
    } else if (arg.starts_with("--duration=")) {
      value = arg.substr(std::strlen("--duration="));
    } else {
      std::fprintf(stderr, "%s: unknown or incomplete option '%s'\n", argv[0], argv[i]);
      usage(stderr, 2);
    }
    char* end = nullptr;
    errno = 0;
    const double seconds = std::strtod(value.data(), &end);
    if (value.empty() || *end != '\0' || errno != 0 || !(seconds > 0.0) || seconds > 1e6) {
      std::fprintf(stderr, "%s: --duration wants a positive number of seconds, not '%.*s'\n", argv[0],
                   static_cast<int>(value.size()), value.data());
      usage(stderr, 2);
    }
    cmd.duration_s = seconds;
  }
  return cmd;
}

/// Deadline of a run that started at `start_ns`; INT64_MAX without --duration.
inline std::int64_t deadline_ns(const CommandLine& cmd, std::int64_t start_ns) noexcept {
  return cmd.duration_s ? start_ns + static_cast<std::int64_t>(*cmd.duration_s * 1e9) : INT64_MAX;
}

}  // namespace examples
