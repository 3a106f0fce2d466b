// Same-machine baselines measured by axon-bench itself: what the hardware
// and the kernel cost, next to which axon's figures are read.
//   cacheline  two processes bounce a cache line in a MAP_SHARED mapping
//              (busy-poll): the floor of any shared-memory transport.
//   futex      the same with futex wait/wake (the floor of a blocking one).
//   uds, udp   Unix-domain-socket and UDP-loopback ping-pong (what a
//              socket-based middleware pays at least).
//   udp-uring, udp-uring-recv, udp-handoff  UDP-loopback ping-pong with the
//              receiver waiting in io_uring on its socket and a futex word
//              (then reading, or reading in the same wait), or with a futex
//              hand-off between a receive thread and the answering one (not
//              run by default; what a receive design costs).
//   memcpy     copy bandwidth per payload size (what a copying middleware
//              pays per message on top of its transport).
// ping_pong_baselines.cpp, memcpy_baseline.cpp; the subcommand is in
// baseline_command.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/command.hpp"
#include "results/result_log.hpp"

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
/// How a udp-uring receiver gets its datagram.
enum class UringWait : std::uint8_t {
  kPoll,     ///< udp-uring: watches the socket (poll), then reads it without blocking.
  kReceive,  ///< udp-uring-recv: the wait reads it (RECVMSG), as axon's waiting threads do.
};
/// Same, each receiver waiting in io_uring on its socket and (never woken) a
/// shared futex word in one call: what one thread watching both shared
/// memory and a socket pays. Throws where io_uring has no futex waits (Linux < 6.7).
CaseResult measure_udp_uring_pingpong(const PingPongSetup& setup, std::size_t message_bytes, UringWait how);
/// Same as udp, each side's datagram read by a second thread of its process
/// that hands it over by a futex to the thread that answers: the thread hop
/// of a transport whose receive thread is not its subscriber's.
CaseResult measure_udp_handoff_pingpong(const PingPongSetup& setup, std::size_t message_bytes);
/// Time of one memcpy of each size (warm caches) on `cpu`.
std::vector<CaseResult> measure_memcpy(const std::vector<std::uint64_t>& sizes, int cpu);

/// Prints the memcpy table: size, ns per copy, GB/s.
void print_memcpy_table(std::FILE* out, const std::vector<CaseResult>& cases);

/// Registers `axon-bench baseline` and its options on `app`.
Command add_baseline_command(CLI::App& app);

}  // namespace axon_bench
