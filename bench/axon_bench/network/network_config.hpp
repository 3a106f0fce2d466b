// The deployment config of `axon-bench network` and `axon-bench rdma`: the
// two hosts, a node on each (bench_ping on host 0, bench_pong on host 1) with
// a pool for the payload, the three topics on one transport (udp, or rdma
// when both hosts name `rdma_device`) and the UDP section (discovery; the
// data too for udp). docs/configuration.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace axon_bench {

struct NetworkConfig {
  std::uint32_t domain = 0;
  std::size_t payload_bytes = 64;
  std::string pingpong_reliability = "best_effort";  ///< best_effort | reliable (the stream is always reliable).
  bool static_peers = false;                         ///< false: multicast discovery.
  std::uint32_t socket_buffer_bytes = 8U << 20U;
  std::uint32_t receive_poll_us = 0;  ///< udp.receive_poll_us
  std::string transport = "udp";      ///< The topics' transport: udp or rdma.
  std::string rdma_device{};          ///< rdma: both hosts' hosts[].rdma_device.
  std::string key_file{};             ///< udp.security.key_file; empty: datagrams not authenticated.
  bool encrypt = false;               ///< udp.security.encrypt (with key_file): datagrams encrypted.
};

/// The YAML text of `config` for the hosts at `addresses` (h0, h1).
std::string network_config_yaml(const std::vector<std::string>& addresses, const NetworkConfig& config);

/// Writes 32 random bytes to DIR/axon-bench.key, mode 0600, for udp.security.key_file; returns the path.
/// Throws std::runtime_error when the file cannot be written.
std::string write_network_key(const std::string& dir);

/// Writes it to DIR/axon-bench-<transport>-<payload>.yaml; returns the path.
/// Throws std::runtime_error when the file cannot be written.
std::string write_network_config(const std::vector<std::string>& addresses, const NetworkConfig& config,
                                 const std::string& dir);

}  // namespace axon_bench
