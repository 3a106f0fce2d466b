// `axon-bench idle` (CPU of a domain of idle nodes) and `axon-bench
// discovery` (time to connect a domain, time to let go of a killed process).
#pragma once

#include "harness/command.hpp"

namespace axon_bench {

Command add_idle_command(CLI::App& app);
Command add_discovery_command(CLI::App& app);

}  // namespace axon_bench
