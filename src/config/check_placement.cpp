// Checks across sections for a deployment whose nodes run on several hosts,
// which the UDP transport joins: each of those hosts names its own address (a
// node binds its sockets to it), all of one IP family and either all loopback
// (several "hosts" on one machine) or none, and discovery speaks that family.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <set>

#include "src/config/config_sections.hpp"

namespace axon::detail {
namespace {

struct AddressTraits {
  bool ipv6 = false;
  bool loopback = false;
};

/// `address` was checked by is_ip_address() already.
AddressTraits traits_of(const std::string& address) {
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    return {.ipv6 = false, .loopback = (ntohl(v4.s_addr) >> 24U) == 127U};  // 127.0.0.0/8
  }
  in6_addr v6{};
  inet_pton(AF_INET6, address.c_str(), &v6);
  bool loopback = v6.s6_addr[15] == 1;  // ::1
  for (int i = 0; i < 15; ++i) {
    loopback = loopback && v6.s6_addr[i] == 0;
  }
  return {.ipv6 = true, .loopback = loopback};
}

const char* family(bool ipv6) { return ipv6 ? "IPv6" : "IPv4"; }

/// map[key], or an undefined node when `map` is no mapping (a const Node's
/// operator[] would throw on a missing section).
YAML::Node child(const YAML::Node& map, const char* key) {
  return map.IsDefined() && map.IsMap() ? map[key] : YAML::Node(YAML::NodeType::Undefined);
}

/// Multicast discovery needs a group of the hosts' family; static peers must
/// be reachable in it.
void check_discovery(YamlReader& r, const YAML::Node& root, const DeploymentConfig& config, bool ipv6,
                     const YAML::Node& first_address) {
  const YAML::Node discovery = child(child(root, "udp"), "discovery");
  if (config.udp.static_peers.empty()) {
    if (traits_of(config.udp.multicast_group).ipv6 == ipv6) {
      return;
    }
    const YAML::Node group = child(discovery, "multicast_group");
    r.fail(group.IsDefined() ? group : first_address,
           fmt::format("udp discovery multicast_group {} is an {} group, but the hosts have {} addresses; give an {} "
                       "group ({}) or static_peers",
                       config.udp.multicast_group, family(!ipv6), family(ipv6), family(ipv6),
                       ipv6 ? "such as ff15::a" : "such as 239.255.0.1"));
    return;
  }
  const YAML::Node peers = child(discovery, "static_peers");
  for (std::size_t i = 0; i < config.udp.static_peers.size() && r.ok(); ++i) {
    const std::string& peer = config.udp.static_peers[i];
    const HostConfig* host = config.find_host(peer);
    const std::string& address = host != nullptr ? host->address : peer;
    if (traits_of(address).ipv6 != ipv6) {
      r.fail(peers[i], fmt::format("udp discovery static_peers entry '{}' is an {} address ({}), but the hosts have "
                                   "{} addresses; list peers of one family",
                                   peer, family(!ipv6), address, family(ipv6)));
    }
  }
}

}  // namespace

void check_placement(YamlReader& r, const YAML::Node& root, const DeploymentConfig& config) {
  std::set<std::string> used;
  for (const auto& node : config.nodes) {
    if (!node.host.empty()) {
      used.insert(node.host);
    }
  }
  if (used.size() < 2) {
    return;  // one host: shared memory only, addresses unused
  }
  std::string used_list;
  for (const auto& host : config.hosts) {
    if (used.count(host.name) != 0) {
      used_list += (used_list.empty() ? "" : ", ") + host.name;
    }
  }
  const YAML::Node entries = root["hosts"];
  const HostConfig* first = nullptr;
  YAML::Node first_address;
  for (std::size_t i = 0; i < config.hosts.size() && r.ok(); ++i) {
    const HostConfig& host = config.hosts[i];
    if (used.count(host.name) == 0) {
      continue;
    }
    const YAML::Node entry = entries[i];
    const YAML::Node address = entry["address"];
    if (!address.IsDefined()) {
      r.fail(entry, fmt::format("host '{}' needs an address: nodes run on hosts {}, which reach each other over UDP, "
                                "and a node binds its sockets to its host's address; add 'address:' with an IP of "
                                "'{}' that the other hosts can reach",
                                host.name, used_list, host.name));
      return;
    }
    if (first == nullptr) {
      first = &host;
      first_address = address;
      continue;
    }
    const AddressTraits a = traits_of(first->address);
    const AddressTraits b = traits_of(host.address);
    if (a.ipv6 != b.ipv6) {
      r.fail(address,
             fmt::format("host '{}' has the {} address {} and host '{}' the {} address {}; hosts whose nodes "
                         "talk over UDP need addresses of one family",
                         host.name, family(b.ipv6), host.address, first->name, family(a.ipv6), first->address));
    } else if (a.loopback != b.loopback) {
      r.fail(address, fmt::format("host '{}' has address {} and host '{}' {}, but a loopback address reaches only its "
                                  "own machine; give every host a loopback address (hosts on one machine, such as "
                                  "127.0.0.1 and 127.0.0.2) or none",
                                  host.name, host.address, first->name, first->address));
    }
  }
  if (r.ok() && first != nullptr) {
    check_discovery(r, root, config, traits_of(first->address).ipv6, first_address);
  }
}

}  // namespace axon::detail
