// `axon-bench soak`: runs a scenario (the urban one by default) for a set
// time, samples every second the memory, descriptors, mappings and threads
// of every process of the run and the domain's pool free chunks and registry
// slots, keeps each topic's latency per window, and judges every series flat
// after the warm-up (PASS/FAIL with figures; the bounds are in
// docs/reliability.md, "Soak"). Writes a JSON document and an HTML report
// with a plot of each series; exits non-zero on FAIL.
#pragma once

#include "harness/command.hpp"

namespace axon_bench {

/// Registers `axon-bench soak` and its options on `app`.
Command add_soak_command(CLI::App& app);

}  // namespace axon_bench
