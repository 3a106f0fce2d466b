// The deployment config of `axon-bench network`: the two virtual hosts, a
// node on each (bench_ping on host 0, bench_pong on host 1) with a pool for
// the payload, the three topics and the UDP section. docs/configuration.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/support/common/netns.hpp"

namespace axon_bench {

struct NetworkConfig {
  std::uint32_t domain = 0;
  std::size_t payload_bytes = 64;
  std::string pingpong_reliability = "best_effort";  ///< best_effort | reliable (the stream is always reliable).
  bool static_peers = false;                         ///< false: multicast discovery.
  std::uint32_t socket_buffer_bytes = 8U << 20U;
  std::uint32_t receive_poll_us = 0;  ///< udp.receive_poll_us
};

/// The YAML text of `config` for `hosts`.
std::string network_config_yaml(const axon::test::VirtualHosts& hosts, const NetworkConfig& config);

/// Writes it to DIR/axon-bench-network-<payload>.yaml; returns the path.
/// Throws std::runtime_error when the file cannot be written.
std::string write_network_config(const axon::test::VirtualHosts& hosts, const NetworkConfig& config,
                                 const std::string& dir);

}  // namespace axon_bench
