// The `udp:` section of the UDP transport: discovery (multicast or static
// peers), heartbeats, socket buffers and MTU, the largest message, the
// RELIABLE history and reassembly timeout, how long the receive thread polls,
// and security (key files, encryption, allowed sources).
#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "src/config/config_sections.hpp"

namespace axon::detail {
namespace {

constexpr std::uint64_t kMinBufferBytes = 64U << 10U;
constexpr std::uint64_t kMaxBufferBytes = 1U << 30U;
constexpr std::uint64_t kMinMessageBytes = 1U << 10U;
/// The reassembler's and the parser's limit (ReassemblyConfig, WireLimits).
constexpr std::uint64_t kMaxMessageBytes = 16U << 20U;
/// Sizes above this are read, then refused with the reason above.
constexpr std::uint64_t kLargestSize = 1U << 30U;
/// 576: the datagram every IPv4 host must accept (RFC 791). 65535: the
/// largest IP packet, whose 65507-byte UDP payload is the wire format's limit.
constexpr std::uint64_t kMinMtu = 576;
constexpr std::uint64_t kMaxMtu = 65535;
constexpr std::uint64_t kMaxHistoryDepth = 4096;
constexpr std::uint64_t kMaxReassemblyTimeoutMs = 60'000;
/// A second: beyond that, polling is busy-waiting on an idle link.
constexpr std::uint64_t kMaxReceivePollUs = 1'000'000;

void read_discovery(YamlReader& r, const YAML::Node& map, UdpConfig& udp, const std::vector<HostConfig>& hosts) {
  const std::string what = "udp discovery";
  if (!r.expect_map(map, what)) {
    return;
  }
  r.check_keys(map, {"multicast_group", "port", "static_peers"}, what);
  const YAML::Node group = map["multicast_group"];
  const YAML::Node peers = map["static_peers"];
  if (group.IsDefined() && peers.IsDefined() && r.ok()) {
    r.fail(peers, what + ": give either multicast_group or static_peers, not both (static peers replace multicast)");
    return;
  }
  if (group.IsDefined() && r.ok()) {
    udp.multicast_group = r.text(group, what + " multicast_group");
    if (r.ok() && !is_multicast_address(udp.multicast_group)) {
      r.fail(group, what +
                        " multicast_group must be a multicast address (IPv4 224.0.0.0 to 239.255.255.255, "
                        "such as 239.255.0.1, or IPv6 ff00::/8), found '" +
                        udp.multicast_group + "'");
    }
  }
  if (const YAML::Node port = map["port"]; port.IsDefined()) {
    udp.discovery_port = static_cast<std::uint16_t>(r.integer(port, what + " port", 1, 65535));
  }
  if (!peers.IsDefined() || !r.ok() || !r.expect_list(peers, what + " static_peers")) {
    return;
  }
  for (const auto& peer : peers) {
    const std::string name = r.text(peer, what + " static_peers entry");
    if (!r.ok()) {
      return;
    }
    bool known_host = false;
    for (const auto& host : hosts) {
      known_host = known_host || host.name == name;
    }
    if (!known_host && !is_ip_address(name)) {
      const std::string near = closest_match(name, names_of(hosts));
      r.fail(peer, fmt::format("{} static_peers entry '{}' is neither a host of hosts: nor a numeric IP address{}",
                               what, name, near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
      return;
    }
    for (const auto& seen : udp.static_peers) {
      if (seen == name) {
        r.fail(peer, fmt::format("{} static_peers lists '{}' twice", what, name));
        return;
      }
    }
    udp.static_peers.push_back(name);
  }
  if (udp.static_peers.empty()) {
    r.fail(peers, what + " static_peers is empty; list at least one peer or remove it to use multicast");
  }
}

void read_liveliness(YamlReader& r, const YAML::Node& map, UdpConfig& udp) {
  if (const YAML::Node v = map["heartbeat_period_ms"]; v.IsDefined()) {
    udp.heartbeat_period_ms = static_cast<std::uint32_t>(r.integer(v, "udp heartbeat_period_ms", 1, 60'000));
  }
  if (const YAML::Node v = map["liveliness_timeout_ms"]; v.IsDefined()) {
    udp.liveliness_timeout_ms = static_cast<std::uint32_t>(r.integer(v, "udp liveliness_timeout_ms", 1, 600'000));
  }
  if (r.ok() && udp.liveliness_timeout_ms <= udp.heartbeat_period_ms) {
    const YAML::Node at =
        map["liveliness_timeout_ms"].IsDefined() ? map["liveliness_timeout_ms"] : map["heartbeat_period_ms"];
    r.fail(at, "udp liveliness_timeout_ms (" + std::to_string(udp.liveliness_timeout_ms) +
                   ") must be longer than heartbeat_period_ms (" + std::to_string(udp.heartbeat_period_ms) +
                   "), or every host is lost between two heartbeats; a few periods is usual");
  }
}

void read_sockets(YamlReader& r, const YAML::Node& map, UdpConfig& udp) {
  if (const YAML::Node v = map["send_buffer_bytes"]; v.IsDefined()) {
    udp.send_buffer_bytes =
        static_cast<std::uint32_t>(r.size(v, "udp send_buffer_bytes", kMinBufferBytes, kMaxBufferBytes));
  }
  if (const YAML::Node v = map["receive_buffer_bytes"]; v.IsDefined()) {
    udp.receive_buffer_bytes =
        static_cast<std::uint32_t>(r.size(v, "udp receive_buffer_bytes", kMinBufferBytes, kMaxBufferBytes));
  }
  if (const YAML::Node v = map["receive_poll_us"]; v.IsDefined()) {
    udp.receive_poll_us = static_cast<std::uint32_t>(
        r.integer(v, "udp receive_poll_us (microseconds the UDP thread polls after data before it sleeps; 0: none)", 0,
                  kMaxReceivePollUs));
  }
  if (const YAML::Node v = map["mtu"]; v.IsDefined()) {
    udp.mtu = static_cast<std::uint32_t>(
        r.integer(v, "udp mtu (IP packet size of the links: 1500, 9000 with jumbo frames)", kMinMtu, kMaxMtu));
  }
}

void read_messages(YamlReader& r, const YAML::Node& map, UdpConfig& udp) {
  if (const YAML::Node v = map["max_message_bytes"]; v.IsDefined()) {
    const std::uint64_t bytes = r.size(v, "udp max_message_bytes", kMinMessageBytes, kLargestSize);
    if (r.ok() && bytes > kMaxMessageBytes) {
      r.fail(v, fmt::format("udp max_message_bytes is {} bytes; the UDP transport carries messages of at most "
                            "{} bytes (16 MiB): give a size from {} to {} bytes",
                            bytes, kMaxMessageBytes, kMinMessageBytes, kMaxMessageBytes));
    }
    udp.max_message_bytes = static_cast<std::uint32_t>(std::min(bytes, kMaxMessageBytes));
  }
  if (const YAML::Node v = map["history_depth"]; v.IsDefined()) {
    udp.history_depth = static_cast<std::uint32_t>(
        r.integer(v, "udp history_depth (messages a RELIABLE writer keeps for resends)", 1, kMaxHistoryDepth));
  }
  if (const YAML::Node v = map["reassembly_timeout_ms"]; v.IsDefined()) {
    udp.reassembly_timeout_ms =
        static_cast<std::uint32_t>(r.integer(v, "udp reassembly_timeout_ms", 1, kMaxReassemblyTimeoutMs));
  }
}

/// "10.0.0.0/24" or "192.168.1.7": an IPv4 address, then optionally a prefix length 0..32.
bool is_ipv4_range(const std::string& text) {
  const std::size_t slash = text.find('/');
  in_addr address{};
  if (inet_pton(AF_INET, text.substr(0, slash).c_str(), &address) != 1) {
    return false;
  }
  if (slash == std::string::npos) {
    return true;
  }
  const std::string bits = text.substr(slash + 1);
  unsigned value = 0;
  const auto [end, error] = std::from_chars(bits.data(), bits.data() + bits.size(), value);
  return !bits.empty() && error == std::errc{} && end == bits.data() + bits.size() && value <= 32;
}

void read_security(YamlReader& r, const YAML::Node& map, UdpConfig& udp) {
  const std::string what = "udp security";
  if (!r.expect_map(map, what)) {
    return;
  }
  r.check_keys(map, {"key_file", "previous_key_file", "allow", "encrypt"}, what);
  if (const YAML::Node v = map["key_file"]; v.IsDefined() && r.ok()) {
    udp.security.key_file = r.text(v, what + " key_file (a file of 32 random bytes, mode 0600)");
  }
  if (const YAML::Node v = map["previous_key_file"]; v.IsDefined() && r.ok()) {
    udp.security.previous_key_file = r.text(v, what + " previous_key_file (the key still accepted while rotating)");
    if (r.ok() && udp.security.key_file.empty()) {
      r.fail(v, what + " previous_key_file needs a key_file: the previous key is only accepted, never sent with");
    }
  }
  if (const YAML::Node v = map["encrypt"]; v.IsDefined() && r.ok()) {
    udp.security.encrypt = r.boolean(v, what + " encrypt");
    if (r.ok() && udp.security.encrypt && udp.security.key_file.empty()) {
      r.fail(v, what +
                    " encrypt: true needs a key_file: the datagrams are encrypted under the domain's key (add "
                    "key_file: PATH, a file of 32 random bytes, mode 0600, the same on every host)");
    }
  }
  const YAML::Node allow = map["allow"];
  if (!allow.IsDefined() || !r.ok() || !r.expect_list(allow, what + " allow")) {
    return;
  }
  for (const auto& entry : allow) {
    const std::string text = r.text(entry, what + " allow entry");
    if (!r.ok()) {
      return;
    }
    if (!is_ipv4_range(text)) {
      r.fail(entry, fmt::format("{} allow entry '{}' is not an IPv4 address or network such as 192.168.1.7 or "
                                "10.0.0.0/24",
                                what, text));
      return;
    }
    udp.security.allow.push_back(text);
  }
  if (udp.security.allow.empty()) {
    r.fail(allow, what +
                      " allow is empty, which would refuse every host; list the addresses or networks to accept, "
                      "or remove it to accept any");
  }
}

}  // namespace

UdpConfig read_udp(YamlReader& r, const YAML::Node& map, const std::vector<HostConfig>& hosts) {
  UdpConfig udp;
  if (!map.IsDefined() || map.IsNull() || !r.expect_map(map, "udp")) {
    return udp;
  }
  r.check_keys(
      map,
      {"discovery", "heartbeat_period_ms", "liveliness_timeout_ms", "send_buffer_bytes", "receive_buffer_bytes",
       "receive_poll_us", "max_message_bytes", "mtu", "history_depth", "reassembly_timeout_ms", "security"},
      "udp");
  if (const YAML::Node discovery = map["discovery"]; discovery.IsDefined() && r.ok()) {
    read_discovery(r, discovery, udp, hosts);
  }
  read_liveliness(r, map, udp);
  read_sockets(r, map, udp);
  read_messages(r, map, udp);
  if (const YAML::Node security = map["security"]; security.IsDefined() && r.ok()) {
    read_security(r, security, udp);
  }
  return udp;
}

}  // namespace axon::detail
