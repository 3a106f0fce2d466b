// What `axon-bench chaos` adds to a result file: the seed and the exact
// fault schedule (to replay a run), when each fault really began and ended,
// the table of checks, and per topic and subscriber a timeline of its rate
// and latency during the run with faults. Written as the "chaos" member of
// the JSON (docs/reliability.md), read back, and drawn by the HTML report.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace axon_bench {

struct ChaosFaultEntry {
  std::string kind;
  std::string target;  ///< Component or topic; empty for host faults.
  std::string yaml;    ///< The schedule entry that gives it again.
  double at_s = 0;     ///< Planned, from the start of the measured window.
  double begun_s = 0;  ///< Really.
  double ended_s = 0;
  std::string note;  ///< What it did, where that says more ("held 812 MiB").
};

struct ChaosCheckEntry {
  std::string name;
  bool pass = false;
  std::string figure;
  std::string bound;
};

/// One topic and subscriber over the run with faults, in buckets of ChaosLog::bucket_s from the window's start.
struct ChaosSeriesEntry {
  std::string label;            ///< "topic -> subscriber".
  bool touched = false;         ///< A fault touched it (its latency is not held to the baseline's).
  std::vector<double> rate_hz;  ///< Messages received per second.
  std::vector<double> max_us;   ///< Largest latency in the bucket (0: none received).
};

struct ChaosLog {
  std::string scenario;
  std::optional<std::uint64_t> seed;  ///< Of the random faults, when there were any.
  double duration_s = 0;
  double baseline_duration_s = 0;
  double bucket_s = 0.25;
  std::vector<ChaosFaultEntry> faults;
  std::vector<ChaosCheckEntry> checks;
  std::vector<ChaosSeriesEntry> series;

  [[nodiscard]] bool passed() const;
};

/// The "chaos" member's JSON value.
std::string chaos_json(const ChaosLog& log);

/// Reads a "chaos" member back (std::nullopt when absent).
std::optional<ChaosLog> chaos_of(const YAML::Node& node);

/// The report's chaos section: checks, schedule, timeline.
std::string chaos_html(const ChaosLog& log);

}  // namespace axon_bench
