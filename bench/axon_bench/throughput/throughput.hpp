// `axon-bench throughput`: one publisher process to N subscriber processes,
// lossless, per payload size: messages/s and MB/s, each subscriber's count,
// CPU per process, next to the memcpy bandwidth of the same run.
#pragma once

#include "harness/command.hpp"

namespace axon_bench {

/// Registers `axon-bench throughput` and its options on `app`.
Command add_throughput_command(CLI::App& app);

}  // namespace axon_bench
