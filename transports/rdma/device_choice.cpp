#include "transports/rdma/device_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace axon::rdma {
namespace {

std::string device_names(std::span<const DeviceDescription> present) {
  std::string names;
  for (const DeviceDescription& d : present) {
    names += names.empty() ? d.name : ", " + d.name;
  }
  return names;
}

std::string gid_list(const PortDescription& port) {
  if (port.gids.empty()) {
    return "none";
  }
  std::string list;
  for (const GidEntry& g : port.gids) {
    list += fmt::format("{}{} {} ({})", list.empty() ? "" : ", ", g.index, gid_text(g.gid), to_string(g.type));
  }
  return list;
}

std::string netdev_of(const PortDescription& port) {
  return port.netdev.empty() ? std::string("its network interface") : port.netdev;
}

Result<const DeviceDescription*> find_device(std::span<const DeviceDescription> present, const DeviceRequest& r) {
  if (present.empty()) {
    return Error(ErrorCode::kSystem,
                 fmt::format("host '{}': no RDMA device found (ibv_get_device_list lists none): load the driver "
                             "of the card (`rdma link` lists the devices; for Soft-RoCE: `modprobe rdma_rxe; rdma "
                             "link add rxe0 type rxe netdev <interface>`), or use transport udp or auto for the "
                             "topics of this host",
                             r.host));
  }
  if (r.device.empty()) {
    if (present.size() > 1) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("host '{}' has several RDMA devices ({}): name the one to use in its "
                               "hosts[].rdma_device",
                               r.host, device_names(present)));
    }
    return &present.front();
  }
  const auto it = std::ranges::find(present, r.device, &DeviceDescription::name);
  if (it == present.end()) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("host '{}': hosts[].rdma_device names '{}', but this machine has no RDMA device of "
                             "that name; present: {}",
                             r.host, r.device, device_names(present)));
  }
  return &*it;
}

Result<const PortDescription*> find_active_port(const DeviceDescription& d, const DeviceRequest& r) {
  const auto it = std::ranges::find(d.ports, r.port, &PortDescription::number);
  if (it == d.ports.end()) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("host '{}': rdma.port is {}, but device {} has ports 1..{}; set rdma.port to one of "
                             "them",
                             r.host, r.port, d.name, d.ports.size()));
  }
  if (it->state != PortState::kActive) {
    return Error(ErrorCode::kSystem,
                 fmt::format("host '{}': port {} of RDMA device {} is {}, not ACTIVE: bring {} up (`ip link set "
                             "<interface> up`, check the cable or the switch port); `ibv_devinfo -d {}` shows "
                             "the port's state",
                             r.host, r.port, d.name, to_string(it->state), netdev_of(*it), d.name));
  }
  return &*it;
}

const GidEntry* auto_gid(const PortDescription& port, std::uint32_t ipv4) {
  const GidEntry* first_v2 = nullptr;
  for (const GidEntry& g : port.gids) {
    if (g.type != GidType::kRoceV2) {
      continue;
    }
    if (ipv4 != 0 && gid_is_ipv4(g.gid) && gid_ipv4(g.gid) == ipv4) {
      return &g;
    }
    first_v2 = first_v2 == nullptr ? &g : first_v2;
  }
  return first_v2;
}

Result<GidEntry> choose_gid(const DeviceDescription& d, const PortDescription& port, const DeviceRequest& r) {
  if (r.gid_index) {
    const auto it = std::ranges::find(port.gids, *r.gid_index, &GidEntry::index);
    if (it == port.gids.end() || it->type != GidType::kRoceV2) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("host '{}': rdma.gid_index is {}, but GID {} of {} port {} is {}; axon needs a "
                               "RoCE v2 GID: set rdma.gid_index to one of them, or to auto (GIDs: {})",
                               r.host, *r.gid_index, *r.gid_index, d.name, port.number,
                               it == port.gids.end() ? std::string("not there") : std::string(to_string(it->type)),
                               gid_list(port)));
    }
    return *it;
  }
  if (const GidEntry* g = auto_gid(port, r.ipv4)) {
    return *g;
  }
  return Error(ErrorCode::kSystem,
               fmt::format("host '{}': port {} of RDMA device {} has no RoCE v2 GID (GIDs: {}): give {} an IP "
                           "address (the kernel adds a RoCE v2 GID for each address of the interface), or, "
                           "where the card can, enable RoCE v2 (`cma_roce_mode`)",
                           r.host, port.number, d.name, gid_list(port), netdev_of(port)));
}

}  // namespace

Result<DeviceChoice> choose_device(std::span<const DeviceDescription> present, const DeviceRequest& request) {
  auto device = find_device(present, request);
  if (!device) {
    return device.error();
  }
  auto port = find_active_port(**device, request);
  if (!port) {
    return port.error();
  }
  auto gid = choose_gid(**device, **port, request);
  if (!gid) {
    return gid.error();
  }
  return DeviceChoice{.device = (*device)->name, .port = request.port, .gid = *gid};
}

}  // namespace axon::rdma
