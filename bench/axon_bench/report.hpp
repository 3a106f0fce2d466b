// What a benchmark run produced: one CaseResult per measured case, the run's
// context (machine, revision, command line) and the writers for them.
// Later outputs (an HTML report) read the same ResultLog.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stats.hpp"
#include "system.hpp"

namespace axon_bench {

/// One measured case. Latencies are one-way (round trips halved).
struct CaseResult {
  std::string benchmark;  ///< Subcommand: "latency", "baseline".
  std::string mode;       ///< "oneway", "pingpong", "copy".
  std::string transport;  ///< "shm", or the baseline's mechanism: "cacheline", "futex", "uds", "udp", "memcpy".
  std::string serializer = "raw";
  std::string wait_strategy = "busy-poll";  ///< "busy-poll", "futex", "blocking-syscall".
  std::uint64_t payload_bytes = 0;
  bool touch = false;  ///< The whole payload was written and read each message.
  double rate_hz = 0;  ///< Fixed send rate; 0 = as fast as the receiver consumes.
  LatencySummary latency;
  double msgs_per_s = 0;                       ///< Messages delivered per second (both directions for pingpong).
  double mb_per_s = 0;                         ///< msgs_per_s * payload_bytes / 1e6.
  std::optional<double> cpu_percent;           ///< Both processes, 100 = one core.
  std::optional<double> cpu_percent_sender;    ///< Worker 0 (publisher / ping side).
  std::optional<double> cpu_percent_receiver;  ///< Worker 1 (subscriber / pong side).
  std::optional<double> ratio_to_raw_p50;      ///< p50 / the same run's raw cache-line p50.
  std::uint64_t dropped = 0;                   ///< Messages lost (rate mode: queue full).
};

/// Context of the whole run.
struct RunInfo {
  std::string command_line;
  std::string git_revision;  ///< From CMake at configure time, or "unknown".
  std::string date_utc;      ///< ISO 8601.
  MachineInfo machine;
  std::vector<int> cpus;

  /// Fills everything but `cpus` from this process.
  static RunInfo collect(int argc, char** argv);
};

/// The results of a run, in the order measured.
struct ResultLog {
  RunInfo run;
  std::vector<CaseResult> cases;
};

/// Writes `log` as JSON to `path` ("-" = stdout). Returns an empty string
/// or what went wrong.
std::string write_json(const ResultLog& log, const std::string& path);

/// `log` as JSON text (documented in docs/performance.md).
std::string to_json(const ResultLog& log);

}  // namespace axon_bench
