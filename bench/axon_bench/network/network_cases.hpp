// The cases of `axon-bench network`: two processes on two virtual hosts
// joined by a veth pair (tests/support/common/netns.hpp), exchanging messages of one
// size. Raw UDP sockets (raw_udp_endpoint.hpp) are the same-run baseline of
// axon's UDP transport: same path, same bytes on the wire.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "results/result_log.hpp"
#include "tests/support/common/netns.hpp"
#include <axon/wait_strategy.hpp>

namespace axon_bench {

struct NetworkCase {
  /// Two hosts: worker k runs on host k. Null: both workers stay in this
  /// network namespace (`axon-bench rdma`: two addresses of one guest) and
  /// `shm_dirs` keeps their shared memory apart, as two machines would.
  const axon::test::VirtualHosts* hosts = nullptr;
  std::array<std::string, 2> shm_dirs;  ///< axon: NodeOptions::shm_dir of worker k ("" = the default).
  std::string transport = "udp";        ///< axon: the config's transport of the topics, recorded in the results.
  std::size_t payload_bytes = 64;
  std::uint64_t samples = 1000;  ///< Ping-pong: round trips recorded ...
  std::uint64_t warmup = 100;    ///< ... after this many.
  double duration_s = 2;         ///< Throughput: measured seconds, after `warmup` messages.
  std::uint32_t window = 4;      ///< Raw throughput: messages sent and not yet acknowledged.
  std::vector<int> cpus{-1, -1};
  std::uint32_t socket_buffer_bytes = 8U << 20U;             ///< SO_SNDBUF and SO_RCVBUF on both sides.
  std::uint16_t port = 7411;                                 ///< Raw sockets' port on both hosts.
  std::string config_path;                                   ///< axon: the deployment config of the two hosts.
  axon::WaitStrategy wait = axon::WaitStrategy::blocking();  ///< axon: how receivers wait (WaitSet).
  /// Raw receivers poll (recvmmsg without waiting, sched_yield() between)
  /// this long before they block, as axon's UDP thread with udp.receive_poll_us.
  std::int64_t receive_poll_ns = 0;
};

/// Round trips of a message over raw UDP sockets (recvmmsg; polls first with
/// receive_poll_ns).
/// Throws std::runtime_error when a worker fails (a lost datagram, ...).
CaseResult measure_raw_udp_pingpong(const NetworkCase& c);
/// Messages per second one socket streams to the other, at most `window`
/// unacknowledged; counted when complete at the receiver.
CaseResult measure_raw_udp_throughput(const NetworkCase& c);

/// Round trips through axon: a ping node on host 0, a pong node on host 1,
/// each publishing to the other over the transport the config names.
CaseResult measure_axon_pingpong(const NetworkCase& c);
/// Messages per second a publisher on host 0 delivers to a RELIABLE
/// subscriber on host 1.
CaseResult measure_axon_throughput(const NetworkCase& c);

}  // namespace axon_bench
