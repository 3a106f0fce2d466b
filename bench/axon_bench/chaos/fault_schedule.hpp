// The fault schedule of a chaos run: the `faults:` list and the `random:`
// section of a scenario file (next to its topics and components), or faults
// drawn from a seed. Times count from the start of the measured window.
// The format is in docs/reliability.md ("Chaos").
//
// load_fault_plan() rejects a malformed schedule with ScenarioError, whose
// message starts with "FILE:LINE:COLUMN:" and names the key that is wrong
// (as load_scenario() does for the rest of the file).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario_config.hpp"

namespace axon_bench {

enum class FaultKind : std::uint8_t {
  kKill,            ///< SIGKILL a component, start it again after restart_after_s.
  kStop,            ///< SIGSTOP a component, SIGCONT after for_s.
  kBurst,           ///< A topic's publisher publishes `factor` times its rate for for_s.
  kCpuHog,          ///< A busy process per CPU for for_s.
  kMemoryPressure,  ///< A process fills fill_percent of MemAvailable for for_s.
  kShmFull,         ///< A file fills the shm directory to leave_mib free for for_s.
  // Network faults, on the virtual hosts of a scenario whose components name `host:` (chaos/net_faults.hpp):
  kLoss,       ///< percent of the datagrams arriving at a host dropped (iptables statistic) for for_s.
  kDelay,      ///< A host's outgoing packets delayed delay_ms +- jitter_ms (NFQUEUE delayer) for for_s.
  kReorder,    ///< A host's outgoing packets delayed delay_ms but percent of them sent at once (NFQUEUE delayer).
  kPartition,  ///< A host cut off from every other (peer -1), or two hosts from each other (iptables), for for_s.
};

/// "kill", "stop", "burst", "cpu_hog", "memory_pressure", "shm_full", "loss", "delay", "reorder", "partition".
const char* fault_kind_name(FaultKind kind) noexcept;

/// Whether `kind` acts on the network between virtual hosts (loss, delay, reorder, partition).
bool is_network_fault(FaultKind kind) noexcept;

/// The most of MemAvailable memory_pressure may fill: the machine must never run out.
inline constexpr double kMaxFillPercent = 80;

struct Fault {
  FaultKind kind = FaultKind::kKill;
  double at_s = 0;              ///< From the start of the measured window.
  double for_s = 0;             ///< Length (kill: until the restart).
  int component = -1;           ///< kill, stop: the component's index.
  int topic = -1;               ///< burst: the topic's index.
  double factor = 1;            ///< burst: rate multiplier.
  double fill_percent = 0;      ///< memory_pressure: of MemAvailable at its start.
  std::uint64_t leave_mib = 0;  ///< shm_full: MiB left free.
  int host = -1;                ///< Network faults: index into Scenario::hosts.
  int peer = -1;                ///< partition `between: [host, peer]`; -1: `host` cut off from all others.
  double percent = 0;           ///< loss: datagrams dropped; reorder: packets sent at once.
  double delay_ms = 0;          ///< delay, reorder.
  double jitter_ms = 0;         ///< delay.

  [[nodiscard]] double end_s() const noexcept { return at_s + for_s; }
  /// One line of YAML that gives this fault again ("{at_s: 4, kind: kill, ...}").
  [[nodiscard]] std::string yaml(const Scenario& s) const;
};

/// `random:` (or --seed): `count` faults of `kinds` drawn from `seed`.
struct RandomFaults {
  std::uint64_t seed = 0;
  std::uint32_t count = 5;
  std::vector<FaultKind> kinds{FaultKind::kKill, FaultKind::kStop, FaultKind::kBurst};
};

struct FaultPlan {
  std::vector<Fault> fixed;            ///< The `faults:` list.
  std::optional<RandomFaults> random;  ///< The `random:` section.
};

/// Reads the `faults:` and `random:` keys of scenario file `path` (already
/// loaded as `s`). Throws ScenarioError naming the key.
FaultPlan load_fault_plan(const std::string& path, const Scenario& s);

/// `random.count` faults drawn from `random.seed` inside a window of
/// `duration_s`: the same seed, scenario and duration give the same faults.
std::vector<Fault> draw_random_faults(const RandomFaults& random, const Scenario& s, double duration_s);

/// The whole schedule, sorted by time: the fixed faults and the drawn ones.
std::vector<Fault> schedule_of(const FaultPlan& plan, const Scenario& s, double duration_s);

/// Checks a schedule against a window of `duration_s`: every fault ends at
/// least `settle_s` before the window does. Returns "" or what is wrong.
std::string check_schedule_fits(const std::vector<Fault>& faults, double duration_s, double settle_s);

}  // namespace axon_bench
