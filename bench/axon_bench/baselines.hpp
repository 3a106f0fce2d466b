// Same-machine baselines measured by axon-bench itself: what the hardware
// and the kernel cost, next to which axon's figures are read.
//   cacheline  two processes bounce a cache line in a MAP_SHARED mapping
//              (busy-poll): the floor of any shared-memory transport.
//   futex      the same with futex wait/wake (the floor of a blocking one).
//   uds, udp   Unix-domain-socket and UDP-loopback ping-pong (what a
//              socket-based middleware pays at least).
//   memcpy     copy bandwidth per payload size (what a copying middleware
//              pays per message on top of its transport).
// ping_pong_baselines.cpp, memcpy_baseline.cpp; the subcommand is in
// baseline_command.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "command.hpp"
#include "report.hpp"

namespace axon_bench {

/// The two processes of a ping-pong: where they run and how long.
struct PingPongSetup {
  std::vector<int> cpus{-1, -1};
  std::uint64_t samples = 100'000;  ///< Round trips recorded.
  std::uint64_t warmup = 10'000;    ///< Round trips before those, not recorded.
};

/// One-way latency (round trip / 2) of a cache line bounced between two
/// processes. Throws std::runtime_error when the run fails.
CaseResult measure_cacheline_pingpong(const PingPongSetup& setup);
/// Same, the waiter sleeping in futex(FUTEX_WAIT) and woken by FUTEX_WAKE.
CaseResult measure_futex_pingpong(const PingPongSetup& setup);
/// `message_bytes` over a socketpair(AF_UNIX, SOCK_SEQPACKET).
CaseResult measure_uds_pingpong(const PingPongSetup& setup, std::size_t message_bytes);
/// `message_bytes` datagrams between two sockets on 127.0.0.1.
CaseResult measure_udp_pingpong(const PingPongSetup& setup, std::size_t message_bytes);
/// Time of one memcpy of each size (warm caches) on `cpu`.
std::vector<CaseResult> measure_memcpy(const std::vector<std::uint64_t>& sizes, int cpu);

/// Prints the memcpy table: size, ns per copy, GB/s.
void print_memcpy_table(std::FILE* out, const std::vector<CaseResult>& cases);

/// Registers `axon-bench baseline` and its options on `app`.
Command add_baseline_command(CLI::App& app);

}  // namespace axon_bench
