// The `hosts:` section and the address checks shared by the others.
#include <arpa/inet.h>

#include <cstring>
#include <map>

#include "src/config/config_sections.hpp"

namespace axon::detail {

bool is_ip_address(std::string_view text) {
  const std::string address(text);
  in_addr v4{};
  in6_addr v6{};
  return inet_pton(AF_INET, address.c_str(), &v4) == 1 || inet_pton(AF_INET6, address.c_str(), &v6) == 1;
}

bool is_multicast_address(std::string_view text) {
  const std::string address(text);
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    const std::uint32_t host_order = ntohl(v4.s_addr);
    return (host_order >> 28U) == 0xEU;  // 224.0.0.0/4
  }
  in6_addr v6{};
  return inet_pton(AF_INET6, address.c_str(), &v6) == 1 && v6.s6_addr[0] == 0xFF;
}

ConfigLocation location_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) {
    return {};
  }
  return {.line = mark.line + 1, .column = mark.column + 1};
}

std::vector<HostConfig> read_hosts(YamlReader& r, const YAML::Node& list) {
  std::vector<HostConfig> hosts;
  if (!list.IsDefined() || list.IsNull() || !r.expect_list(list, "hosts")) {
    return hosts;
  }
  std::map<std::string, std::string> address_owner;
  for (std::size_t i = 0; i < list.size() && r.ok(); ++i) {
    const YAML::Node node = list[i];
    const std::string where = "host #" + std::to_string(i + 1);
    if (!r.expect_map(node, where)) {
      break;
    }
    r.check_keys(node, {"name", "address", "rdma_device"}, where);
    HostConfig host;
    host.location = location_of(node);
    host.name = r.text(r.field(node, "name", where, true), where + " name");
    const std::string what = "host '" + host.name + "'";
    if (const YAML::Node address = node["address"]; address.IsDefined() && r.ok()) {
      host.address = r.text(address, what + " address");
      if (r.ok() && !is_ip_address(host.address)) {
        r.fail(address, what +
                            " address must be a numeric IPv4 or IPv6 address (such as 10.0.0.2 or fd00::2), found '" +
                            host.address + "'");
      }
    } else {
      host.address = "127.0.0.1";
    }
    if (const YAML::Node device = node["rdma_device"]; device.IsDefined() && !device.IsNull()) {
      host.rdma_device = r.text(device, what + " rdma_device");
    }
    if (!r.ok()) {
      break;
    }
    for (const auto& other : hosts) {
      if (other.name == host.name) {
        r.fail(node["name"], "host '" + host.name + "' is defined twice (first at line " +
                                 std::to_string(other.location.line) + "); host names must be unique");
      }
    }
    if (const auto [it, fresh] = address_owner.emplace(host.address, host.name); !fresh && r.ok()) {
      r.fail(
          node["address"].IsDefined() ? node["address"] : node,
          what + " has address " + host.address + ", like host '" + it->second + "'; give each host its own address");
    }
    hosts.push_back(std::move(host));
  }
  return hosts;
}

}  // namespace axon::detail
