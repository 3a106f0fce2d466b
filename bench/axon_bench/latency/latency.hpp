// `axon-bench latency`: axon's one-way and ping-pong latency between two
// pinned processes, for each payload size, next to the raw cache-line
// ping-pong measured at the start of the same run on the same CPUs.
#pragma once

#include "harness/command.hpp"
#include "results/result_log.hpp"

namespace axon_bench {

/// Registers `axon-bench latency` and its options on `app`.
Command add_latency_command(CLI::App& app);

}  // namespace axon_bench
