#include "network/network_config.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "results/result_log.hpp"

namespace axon_bench {
namespace {

/// Chunks per node: enough for queues and in-flight messages, about 64 MiB
/// at most for large payloads (two nodes per run, each on its own host).
std::uint64_t chunk_count(std::size_t payload_bytes) {
  return std::clamp<std::uint64_t>((64ULL << 20U) / payload_bytes, 16, 256);
}

}  // namespace

std::string network_config_yaml(const std::vector<std::string>& addresses, const NetworkConfig& config) {
  const std::string pool =
      "    pool:\n      chunk_classes:\n        - {payload_bytes: " + std::to_string(config.payload_bytes) +
      ", count: " + std::to_string(chunk_count(config.payload_bytes)) + "}\n";
  const std::string device = config.rdma_device.empty() ? "" : ", rdma_device: " + config.rdma_device;
  std::string yaml = "# written by axon-bench\ndomain: " + std::to_string(config.domain) + "\nhosts:\n";
  for (std::size_t k = 0; k < addresses.size(); ++k) {
    yaml += "  - {name: h" + std::to_string(k) + ", address: " + addresses[k] + device + "}\n";
  }
  yaml += "nodes:\n  - name: bench_ping\n    host: h0\n" + pool + "  - name: bench_pong\n    host: h1\n" + pool;
  yaml += "topics:\n";
  for (const char* topic : {"axon_bench/net_ping", "axon_bench/net_pong"}) {
    yaml += "  - {name: " + std::string(topic) + ", transport: " + config.transport +
            ", reliability: " + config.pingpong_reliability + ", depth: 16}\n";
  }
  yaml += "  - {name: axon_bench/net_stream, transport: " + config.transport +
          ", reliability: reliable, history: keep_all, depth: " +
          std::to_string(std::min<std::uint64_t>(chunk_count(config.payload_bytes) / 2, 256)) + "}\n";
  const std::string buffer = std::to_string(config.socket_buffer_bytes);
  yaml += "udp:\n  discovery:\n";
  yaml += config.static_peers ? "    static_peers: [h0, h1]\n" : "    multicast_group: 239.255.0.9\n";
  yaml += "    port: 7400\n  heartbeat_period_ms: 100\n  liveliness_timeout_ms: 1000\n";
  yaml += "  send_buffer_bytes: " + buffer + "\n  receive_buffer_bytes: " + buffer + "\n";
  yaml += "  receive_poll_us: " + std::to_string(config.receive_poll_us) + "\n";
  if (!config.key_file.empty()) {
    yaml += "  security: {key_file: " + config.key_file + (config.encrypt ? ", encrypt: true" : "") + "}\n";
  }
  return yaml;
}

std::string write_network_key(const std::string& dir) {
  std::array<unsigned char, 32> key{};
  if (::getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) {
    throw std::runtime_error("getrandom() failed: no key for --auth");
  }
  std::string path = dir + "/axon-bench.key";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const bool written = fd >= 0 && ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size());
  if (fd >= 0) {
    ::close(fd);
  }
  if (!written) {
    throw std::runtime_error("cannot write the key file " + path);
  }
  return path;
}

std::string write_network_config(const std::vector<std::string>& addresses, const NetworkConfig& config,
                                 const std::string& dir) {
  std::string path = dir + "/axon-bench-" + config.transport + "-" + std::to_string(config.payload_bytes) + ".yaml";
  if (const std::string error = write_text_file(path, network_config_yaml(addresses, config)); !error.empty()) {
    throw std::runtime_error(error);
  }
  return path;
}

}  // namespace axon_bench
