#include "transports/rdma/verbs_handles.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <string>

#include "src/base/errors.hpp"
#include "transports/rdma/pin_limit.hpp"

namespace axon::rdma {
Result<DeviceHandle> open_device(std::string_view name) {
  int count = 0;
  const DeviceListHandle list(ibv_get_device_list(&count));
  for (int i = 0; list != nullptr && i < count; ++i) {
    if (name != ibv_get_device_name(list.get()[i])) {
      continue;
    }
    DeviceHandle device(ibv_open_device(list.get()[i]));
    if (device == nullptr) {
      return Error(ErrorCode::kSystem, fmt::format("cannot open RDMA device {}: ibv_open_device failed ({}); "
                                                   "check the permissions of /dev/infiniband/uverbs*",
                                                   name, errno_text(errno)));
    }
    return device;
  }
  return Error(ErrorCode::kSystem,
               fmt::format("RDMA device {} is gone (ibv_get_device_list no longer lists it)", name));
}

Result<MrHandle> register_region(ibv_pd* pd, std::byte* base, std::size_t bytes, std::string_view what) {
  if (auto allowed = check_can_pin(bytes, what); !allowed.ok()) {
    return allowed.error();
  }
  MrHandle mr(ibv_reg_mr(pd, base, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  if (mr == nullptr) {
    return Error(ErrorCode::kSystem, fmt::format("cannot register {} ({} bytes) for RDMA: ibv_reg_mr failed ({})", what,
                                                 bytes, errno_text(errno)));
  }
  return mr;
}

}  // namespace axon::rdma
