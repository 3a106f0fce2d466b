// Runs one chaos run: forks a process per component (onto its virtual host,
// when the scenario names hosts), starts them together, does the faults of
// the plan at their times (killing and restarting, stopping and continuing
// components, bursts, host faults, network faults in the hosts' namespaces),
// waits until every component has published and taken everything, reads
// every pool, lets them go and looks for what they left behind.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "chaos/chaos_run.hpp"

namespace axon_bench {

/// When one fault of the plan really began and ended (seconds from the start of the measured window).
struct FaultEvent {
  std::size_t fault = 0;  ///< Index into ChaosPlan::faults.
  double begun_s = -1;
  double ended_s = -1;
  std::string note;  ///< What the fault did, where it says more than its schedule ("held 812 MiB").
};

/// Every pool of the domain, read after the publishers stopped.
struct PoolOutcome {
  bool all_free = false;       ///< Every chunk of every pool free, within the bound.
  double seconds_to_free = 0;  ///< From the moment all components drained.
  std::size_t pools_read = 0;
  std::size_t chunks_total = 0;
  std::string held;  ///< At the bound: what was still not free (empty when all_free).
};

struct ChaosRunResult {
  ChaosTimes times;
  std::vector<FaultEvent> events;
  PoolOutcome pools;
  std::vector<std::string> shm_left;  ///< Files of the run's domain left in the shm directory.
  std::vector<pid_t> stray;           ///< Processes this run started that still ran afterwards.
  std::vector<std::string> net_left;  ///< iptables rules and processes (delayers) left in the virtual hosts.
};

/// The bound on the pools: every chunk free this long after the components drained.
inline constexpr double kPoolBoundSeconds = 2.0;

/// Runs `plan` (its faults empty for a baseline). Throws std::runtime_error
/// when a component fails by itself or the run times out; the processes and
/// files it made are gone then.
ChaosRunResult run_chaos(const ChaosPlan& plan, ChaosShared& shared, const std::string& label);

}  // namespace axon_bench
