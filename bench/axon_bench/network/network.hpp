// `axon-bench network`: axon's UDP transport between two virtual hosts (two
// network namespaces joined by a veth pair, tests/support/common/netns.hpp) next to
// raw UDP sockets over the same pair in the same run: round-trip latency per
// payload size and 1 MiB throughput. Needs root.
#pragma once

#include "harness/command.hpp"
#include "results/result_log.hpp"

namespace axon_bench {

/// Registers `axon-bench network` and its options on `app`.
Command add_network_command(CLI::App& app);

}  // namespace axon_bench
