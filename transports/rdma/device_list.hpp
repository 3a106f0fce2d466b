// The RDMA devices this process can open, with their ports and GID tables
// (libibverbs: ibv_get_device_list, ibv_query_port, ibv_query_gid_table).
//
// Thread safety: any thread; opens and closes each device, allocates. Start-up
// only.
#pragma once

#include <vector>

#include "axon/result.hpp"
#include "transports/rdma/device_description.hpp"

namespace axon::rdma {

/// Every device libibverbs lists (empty when there is none, or no RDMA
/// support in the kernel); an error only when a listed device cannot be
/// opened or queried (the message names the device and the call).
[[nodiscard]] Result<std::vector<DeviceDescription>> list_devices();

}  // namespace axon::rdma
