// `axon-bench scenario FILE`: runs a scenario file (topics, rates, sizes and
// the components publishing and subscribing them, one process each) for a
// given time and reports per topic and subscriber: delivered/expected, lost,
// latency percentiles, jitter, and the CPU of every process.
#pragma once

#include "harness/command.hpp"

namespace axon_bench {

/// Registers `axon-bench scenario` and its options on `app`.
Command add_scenario_command(CLI::App& app);

}  // namespace axon_bench
