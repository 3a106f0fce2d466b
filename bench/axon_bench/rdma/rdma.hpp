// `axon-bench rdma`: axon's RDMA transport between two addresses of one RDMA
// device (Soft-RoCE in the guest of scripts/bench-rdma.sh) next to perftest's
// ib_write_lat and ib_write_bw run in the same boot between the same two
// addresses: one-way latency per payload size and throughput, as ratios.
// Each axon node gets its own shared-memory directory, as two machines would.
#pragma once

#include "harness/command.hpp"
#include "results/result_log.hpp"

namespace axon_bench {

/// Registers `axon-bench rdma` and its options on `app`.
Command add_rdma_command(CLI::App& app);

}  // namespace axon_bench
