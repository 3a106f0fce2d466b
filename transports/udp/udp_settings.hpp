// What a UDP participant is configured with. The transport's own type: the
// composition root (src/node_transport.cpp) fills it from the deployment
// config's `udp:` section and resolves host names, so nothing here knows the
// config file or the node's API.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transports/udp/allow_list.hpp"

namespace axon::udp {

/// Who may talk to the participant (docs/configuration.md, `udp: security:`).
struct SecuritySettings {
  std::string key_file;             ///< Empty: datagrams are not authenticated (no envelope).
  std::string previous_key_file;    ///< A second key still accepted (rotation); empty: none.
  std::vector<AddressRange> allow;  ///< Sources accepted; empty: any.
  bool encrypt = false;             ///< Datagrams encrypted, not only authenticated (needs key_file).
};

/// Tuning of the transport (docs/configuration.md, `udp:`).
struct UdpSettings {
  std::uint32_t multicast_group = 0xEFFF0001U;  ///< Host order (239.255.0.1): multicast discovery.
  std::uint16_t discovery_port = 7400;
  std::uint32_t heartbeat_period_ms = 100;
  std::uint32_t liveliness_timeout_ms = 1000;  ///< A remote participant silent this long is lost.
  std::uint32_t send_buffer_bytes = 4U << 20U;
  std::uint32_t receive_buffer_bytes = 4U << 20U;
  std::uint32_t max_message_bytes = 16U << 20U;
  std::uint32_t mtu = 1500;
  std::uint32_t history_depth = 64;  ///< Messages a RELIABLE writer keeps for resends.
  std::uint32_t reassembly_timeout_ms = 500;
  std::uint32_t receive_poll_us = 0;  ///< The UDP thread polls this long after data before it sleeps.
  SecuritySettings security;
};

struct ParticipantConfig {
  std::uint32_t domain_id = 0;
  std::string node_name;
  std::string host;             ///< This host's name (deployment config).
  std::uint32_t host_ipv4 = 0;  ///< Its address: sockets bind here.
  UdpSettings udp;
  std::vector<std::uint32_t> static_peers;  ///< Resolved; empty: multicast discovery.
};

}  // namespace axon::udp
