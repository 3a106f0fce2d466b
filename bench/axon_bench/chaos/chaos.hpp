// `axon-bench chaos FILE`: runs a scenario file twice, fault-free and then
// with the faults its `faults:` and `random:` keys (or --seed) schedule, and
// prints PASS/FAIL per check with its figures: reliable topics lose,
// duplicate and reorder nothing, payloads arrive intact, pools go back to
// free, untouched topics keep their latency, liveliness and deadline
// handlers fire for exactly the faulted components, traffic resumes after
// partitions, nothing is left behind. Components may run on virtual hosts
// (network namespaces, UDP between them) with network faults between them.
// Exits non-zero when a check fails. docs/reliability.md, "Chaos".
#pragma once

#include "harness/command.hpp"

namespace axon_bench {

/// Registers `axon-bench chaos` and its options on `app`.
Command add_chaos_command(CLI::App& app);

}  // namespace axon_bench
