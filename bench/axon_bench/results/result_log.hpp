// What a benchmark run produced: one CaseResult per measured case, the run's
// context (machine, revision, command line) and the JSON writer for them.
// The JSON format is documented in docs/performance.md; json_input.hpp reads
// it back and html_report.hpp renders it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/system.hpp"
#include "results/chaos_log.hpp"
#include "stats/stats.hpp"

namespace axon_bench {

/// One measured case. Latencies are one-way (round trips halved). Fields
/// that do not apply to a case stay empty and are written as null.
struct CaseResult {
  std::string benchmark;  ///< Subcommand: "latency", "throughput", "baseline", "scenario", "wakeup", "network".
  std::string mode;       ///< Pattern: "oneway", "pingpong", "copy", "fanout", "periodic", "cpu", "idle".
  std::string transport;  ///< "shm", "udp" (axon over UDP), or the baseline's mechanism: "cacheline", "futex", "uds",
                          ///< "udp", "memcpy", "raw-udp" (network: sockets over the same veth pair).
  std::string serializer = "raw";
  std::string wait_strategy = "busy-poll";  ///< "busy-poll", "yield", "sleep-100us", "futex", "blocking-syscall".
  std::string message;                      ///< Message type when not a Payload<N> ("ObjectList", "PointCloud").
  std::uint64_t payload_bytes = 0;
  bool touch = false;       ///< The whole payload was written and read each message.
  double rate_hz = 0;       ///< Fixed send rate; 0 = as fast as the receiver consumes.
  bool has_latency = true;  ///< false: latency fields are null (throughput, CPU records).
  LatencySummary latency;
  std::uint64_t messages = 0;                   ///< Messages counted (when there is no latency per message).
  std::optional<double> msgs_per_s;             ///< Messages delivered per second (both directions for pingpong).
  std::optional<double> mb_per_s;               ///< msgs_per_s * payload_bytes / 1e6.
  std::optional<double> cpu_percent;            ///< Every participating process, 100 = one core.
  std::optional<double> cpu_percent_sender;     ///< Worker 0 (publisher / ping side).
  std::optional<double> cpu_percent_receiver;   ///< Worker 1 (subscriber / pong side); all subscribers summed.
  std::vector<double> cpu_percent_per_process;  ///< Throughput: publisher first, then each subscriber.
  std::optional<double> ratio_to_raw_p50;       ///< p50 / the same run's raw cache-line p50.
  std::optional<double> ratio_to_raw64_p50;     ///< p50 / the same run's 64 B raw-struct p50 (serializer runs).
  std::optional<double> ratio_to_memcpy;        ///< mb_per_s / the same run's memcpy bandwidth (throughput).
  /// Wakeup: p50 / the same run's busy-spin p50 (same payload and pattern).
  std::optional<double> ratio_to_busy_spin_p50;
  std::optional<double> ratio_to_futex_p50;  ///< Wakeup: p50 / the same run's raw futex one-way p50.
  /// Network: axon / the same run's raw UDP socket figure of the same size
  /// (p50 for pingpong, msgs/s for throughput).
  std::optional<double> ratio_to_raw_udp;
  /// Rdma: axon / the same boot's perftest figure of the same size (one-way
  /// p50 / ib_write_lat's typical; MiB/s / ib_write_bw's average).
  std::optional<double> ratio_to_perftest;
  std::optional<double> ratio_to_send_lat;  ///< Rdma: one-way p50 / the same boot's ib_send_lat typical.
  /// Rdma: one-way p50 / (the same boot's ib_send_lat typical + axon's shared-memory one-way p50 of the size).
  std::optional<double> ratio_to_floor;
  std::uint64_t dropped = 0;  ///< Messages lost (rate mode: queue full).
  // Throughput.
  std::optional<std::uint32_t> subscribers;
  std::vector<std::uint64_t> received_per_subscriber;
  // Scenario.
  std::optional<std::string> topic;
  std::optional<std::string> component;    ///< The subscribing component (topic records) or the process (cpu records).
  std::optional<std::uint64_t> expected;   ///< Messages due in the measured window (rate x duration).
  std::optional<std::uint64_t> published;  ///< Messages the publisher sent in that window.
  std::optional<std::uint64_t> delivered;  ///< Messages this subscriber received of those.
  std::optional<std::uint64_t> lost;       ///< published - delivered.

  /// The JSON "mode": "latency", "throughput", "scenario" or "baseline:<name>".
  [[nodiscard]] std::string json_mode() const;
  /// A short name for tables and plots ("shm oneway 64 B", "flatbuffers PointCloud").
  [[nodiscard]] std::string label() const;
};

/// Context of the whole run.
struct RunInfo {
  std::string command_line;
  std::string git_revision;  ///< From CMake at configure time, or "unknown".
  std::string date_utc;      ///< ISO 8601.
  MachineInfo machine;
  std::vector<int> cpus;
  std::vector<std::string> notes;  ///< Conditions a reader must know (e.g. "subscribers sleep 100 us when empty").

  /// Fills everything but `cpus` and `notes` from this process.
  static RunInfo collect(int argc, char** argv);
};

/// The results of a run, in the order measured.
struct ResultLog {
  RunInfo run;
  std::vector<CaseResult> cases;
  /// `axon-bench chaos`: its schedule, checks and timelines (the JSON's "chaos").
  std::optional<ChaosLog> chaos;
};

/// Writes `log` as JSON to `path` ("-" = stdout). Returns an empty string
/// or what went wrong.
std::string write_json(const ResultLog& log, const std::string& path);

/// `log` as JSON text (documented in docs/performance.md).
std::string to_json(const ResultLog& log);

/// `text` as a JSON string literal, quoted and escaped.
std::string json_string(const std::string& text);
/// `value` as a JSON number ("null" when not finite).
std::string json_number(double value);

/// Writes `text` to `path`. Returns an empty string or what went wrong.
std::string write_text_file(const std::string& path, const std::string& text);

}  // namespace axon_bench
