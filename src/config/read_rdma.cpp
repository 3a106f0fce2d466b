// The `rdma:` section: the port and GID index of the hosts' rdma_device,
// which a node whose host names a device registers its pool on at start-up
// (docs/design/rdma-transport.md, "Configuration"). Only the keys the
// start-up uses (and cm_port, where each node's RDMA participant listens);
// the transport's own settings come with the transport.
#include <fmt/format.h>

#include <algorithm>

#include "src/config/config_sections.hpp"

namespace axon::detail {
namespace {

/// ibverbs numbers ports and GID table entries in a byte (ibv_port_attr).
constexpr std::uint64_t kMaxPort = 255;
constexpr std::uint64_t kMaxGidIndex = 255;
constexpr std::uint64_t kMaxCmPort = 65535;

void read_gid_index(YamlReader& r, const YAML::Node& value, RdmaConfig& rdma) {
  if (value.IsScalar() && value.Scalar() == "auto") {
    rdma.gid_index.reset();
    return;
  }
  const std::string what = "rdma.gid_index (auto, or the entry of the port's GID table; `show_gids` lists them)";
  double number = 0;
  if (!value.IsScalar() || !YAML::convert<double>::decode(value, number)) {
    r.fail(value, fmt::format("{} must be auto or a whole number from 0 to {}, found {}", what, kMaxGidIndex,
                              YamlReader::kind_of(value)));
    return;
  }
  rdma.gid_index = static_cast<std::uint32_t>(r.integer(value, what, 0, kMaxGidIndex));
}

}  // namespace

RdmaConfig read_rdma(YamlReader& r, const YAML::Node& map, const std::vector<HostConfig>& hosts) {
  RdmaConfig rdma;
  if (!map.IsDefined() || map.IsNull() || !r.expect_map(map, "rdma")) {
    return rdma;
  }
  r.check_keys(map, {"port", "gid_index", "cm_port"}, "rdma");
  if (const YAML::Node port = map["port"]; port.IsDefined() && r.ok()) {
    rdma.port = static_cast<std::uint32_t>(
        r.integer(port, "rdma.port (the port of hosts[].rdma_device, 1-based; `ibv_devinfo` lists them)", 1, kMaxPort));
  }
  if (const YAML::Node gid_index = map["gid_index"]; gid_index.IsDefined() && r.ok()) {
    read_gid_index(r, gid_index, rdma);
  }
  if (const YAML::Node cm_port = map["cm_port"]; cm_port.IsDefined() && r.ok()) {
    rdma.cm_port = static_cast<std::uint16_t>(r.integer(
        cm_port, "rdma.cm_port (the rdma_cm port the nodes listen on; 0: rdma_cm picks a free one)", 0, kMaxCmPort));
  }
  const bool any_device =
      std::any_of(hosts.begin(), hosts.end(), [](const HostConfig& host) { return !host.rdma_device.empty(); });
  if (r.ok() && map.size() > 0 && !any_device) {
    r.fail(map,
           "rdma: sets the port and GID of hosts[].rdma_device, but no host of hosts: names an rdma_device; "
           "add rdma_device to the hosts with an RDMA card, or remove the rdma: section");
  }
  return rdma;
}

}  // namespace axon::detail
