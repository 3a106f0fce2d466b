#include "transports/rdma/device_list.hpp"

#include <fmt/format.h>
#include <infiniband/verbs.h>
#include <net/if.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <string>

#include "src/base/errors.hpp"
#include "transports/rdma/verbs_handles.hpp"

namespace axon::rdma {
namespace {

Error query_error(std::string_view call, std::string_view device, int err) {
  return {ErrorCode::kSystem,
          fmt::format("RDMA device {}: {} failed ({}); `ibv_devinfo -d {}` shows whether the device works", device,
                      call, errno_text(err), device)};
}

GidType gid_type_of(std::uint32_t type) noexcept {
  switch (type) {
    case IBV_GID_TYPE_ROCE_V1: return GidType::kRoceV1;
    case IBV_GID_TYPE_ROCE_V2: return GidType::kRoceV2;
    default: return GidType::kInfiniBand;
  }
}

std::string interface_name(std::uint32_t ifindex) {
  char name[IF_NAMESIZE] = {};
  return ifindex != 0 && if_indextoname(ifindex, name) != nullptr ? std::string(name) : std::string();
}

// The ports of an open device and, from its GID table, each port's GIDs and
// network interface.
Result<DeviceDescription> describe(ibv_context* context, std::string name) {
  ibv_device_attr attr{};
  if (const int err = ibv_query_device(context, &attr); err != 0) {
    return query_error("ibv_query_device", name, err);
  }
  DeviceDescription device{.name = std::move(name), .ports = {}};
  std::size_t gid_slots = 0;
  for (std::uint32_t p = 1; p <= attr.phys_port_cnt; ++p) {
    ibv_port_attr port{};
    if (const int err = ibv_query_port(context, static_cast<std::uint8_t>(p), &port); err != 0) {
      return query_error(fmt::format("ibv_query_port({})", p), device.name, err);
    }
    device.ports.push_back({.number = p,
                            .state = static_cast<PortState>(port.state),
                            .ethernet = port.link_layer == IBV_LINK_LAYER_ETHERNET,
                            .netdev = {},
                            .gids = {}});
    gid_slots += static_cast<std::size_t>(port.gid_tbl_len);
  }
  std::vector<ibv_gid_entry> entries(gid_slots);
  const ssize_t valid = gid_slots == 0 ? 0 : ibv_query_gid_table(context, entries.data(), entries.size(), 0);
  if (valid < 0) {
    return query_error("ibv_query_gid_table", device.name, static_cast<int>(-valid));
  }
  for (const ibv_gid_entry& e : std::span(entries).first(static_cast<std::size_t>(valid))) {
    if (e.port_num < 1 || e.port_num > device.ports.size()) {
      continue;
    }
    PortDescription& port = device.ports[e.port_num - 1];
    GidEntry gid{.index = e.gid_index, .gid = {}, .type = gid_type_of(e.gid_type)};
    std::memcpy(gid.gid.data(), e.gid.raw, gid.gid.size());
    port.gids.push_back(gid);
    if (port.netdev.empty()) {
      port.netdev = interface_name(e.ndev_ifindex);
    }
  }
  return device;
}

}  // namespace

Result<std::vector<DeviceDescription>> list_devices() {
  int count = 0;
  const DeviceListHandle list(ibv_get_device_list(&count));
  std::vector<DeviceDescription> devices;
  if (list == nullptr) {
    // ENOSYS: no RDMA support in the kernel (no /sys/class/infiniband): no device.
    if (errno == ENOSYS) {
      return devices;
    }
    return Error(ErrorCode::kSystem, fmt::format("ibv_get_device_list failed ({})", errno_text(errno)));
  }
  for (int i = 0; i < count; ++i) {
    std::string name = ibv_get_device_name(list.get()[i]);
    const DeviceHandle context(ibv_open_device(list.get()[i]));
    if (context == nullptr) {
      return query_error("ibv_open_device", name, errno);
    }
    auto device = describe(context.get(), std::move(name));
    if (!device) {
      return device.error();
    }
    devices.push_back(std::move(*device));
  }
  return devices;
}

}  // namespace axon::rdma
