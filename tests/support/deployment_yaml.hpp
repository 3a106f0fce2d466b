// Deployment configs for the multi-host tests (docs/configuration.md): hosts
// h0, h1, ... at the virtual hosts' addresses, nodes placed on them, topics
// with their QoS, and a UDP section with short heartbeats so a lost host is
// noticed quickly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/common/netns.hpp"

namespace axon::test {

struct DeployedNode {
  std::string name;
  std::size_t host = 0;  ///< Index of the virtual host ("h<index>" in the file).
};

struct DeployedTopic {
  std::string name;
  std::string reliability = "best_effort";  ///< best_effort | reliable
  std::uint32_t depth = 16;
  std::string history = "keep_last";
};

enum class Discovery { kMulticast, kStaticPeers };

struct Deployment {
  std::uint32_t domain = 0;
  std::vector<DeployedNode> nodes;
  std::vector<DeployedTopic> topics;
  Discovery discovery = Discovery::kMulticast;
  std::string multicast_group = "239.255.42.1";
  std::uint16_t discovery_port = 7400;
  std::uint32_t heartbeat_period_ms = 50;
  /// Twenty heartbeats: short for the tests' sake, long enough that a loaded
  /// (or sanitized) machine does not lose a live host.
  std::uint32_t liveliness_timeout_ms = 1000;
  /// Every node's pool, as YAML flow mappings: room for the tests' sizes.
  std::string chunk_classes =
      "[{payload_bytes: 2 KiB, count: 256}, {payload_bytes: 64 KiB, count: 64}, {payload_bytes: 4 MiB, count: 24}]";
  /// `udp: security:` as a YAML flow mapping ("{key_file: /x/domain.key}"); empty: none.
  std::string security;
};

/// The YAML text of `d` for `hosts` (every host is listed, used or not).
inline std::string to_yaml(const Deployment& d, const VirtualHosts& hosts) {
  std::string y = "domain: " + std::to_string(d.domain) + "\nhosts:\n";
  for (std::size_t k = 0; k < hosts.size(); ++k) {
    y += "  - {name: h" + std::to_string(k) + ", address: " + hosts.host(k).address + "}\n";
  }
  y += "nodes:\n";
  for (const auto& n : d.nodes) {
    y += "  - name: " + n.name + "\n    host: h" + std::to_string(n.host) +
         "\n    pool:\n      chunk_classes: " + d.chunk_classes + "\n";
  }
  y += "topics:\n";
  for (const auto& t : d.topics) {
    y += "  - {name: " + t.name + ", reliability: " + t.reliability + ", history: " + t.history +
         ", depth: " + std::to_string(t.depth) + "}\n";
  }
  y += "udp:\n  discovery:\n";
  if (d.discovery == Discovery::kStaticPeers) {
    y += "    static_peers: [";
    for (std::size_t k = 0; k < hosts.size(); ++k) {
      y += (k == 0 ? "h" : ", h") + std::to_string(k);
    }
    y += "]\n";
  } else {
    y += "    multicast_group: " + d.multicast_group + "\n";
  }
  y += "    port: " + std::to_string(d.discovery_port) + "\n";
  y += "  heartbeat_period_ms: " + std::to_string(d.heartbeat_period_ms) + "\n";
  y += "  liveliness_timeout_ms: " + std::to_string(d.liveliness_timeout_ms) + "\n";
  if (!d.security.empty()) {
    y += "  security: " + d.security + "\n";
  }
  return y;
}

}  // namespace axon::test
