// Owning handles of libibverbs objects, each destroyed by its own verbs call
// when the handle goes, and the two ways the transport gets its first ones:
// the device it chose, and a memory region over a mapping it registers once
// (with the pin check first, so a limit too low is named, not ENOMEM).
//
// Thread safety: the handles are plain owners (one thread, or the caller's
// lock). open_device() and register_region() run at start-up and allocate.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <memory>
#include <string_view>

#include "axon/result.hpp"

namespace axon::rdma {

struct FreeDeviceList {
  void operator()(ibv_device** list) const noexcept { ibv_free_device_list(list); }
};
struct CloseDevice {
  void operator()(ibv_context* c) const noexcept { ibv_close_device(c); }
};
struct DeallocPd {
  void operator()(ibv_pd* p) const noexcept { ibv_dealloc_pd(p); }
};
struct DestroyCq {
  void operator()(ibv_cq* c) const noexcept { ibv_destroy_cq(c); }
};
struct DeregMr {
  void operator()(ibv_mr* m) const noexcept { ibv_dereg_mr(m); }
};
struct DestroyQp {
  void operator()(ibv_qp* q) const noexcept { ibv_destroy_qp(q); }
};

using DeviceListHandle = std::unique_ptr<ibv_device*, FreeDeviceList>;
using DeviceHandle = std::unique_ptr<ibv_context, CloseDevice>;
using PdHandle = std::unique_ptr<ibv_pd, DeallocPd>;
using CqHandle = std::unique_ptr<ibv_cq, DestroyCq>;
using MrHandle = std::unique_ptr<ibv_mr, DeregMr>;
using QpHandle = std::unique_ptr<ibv_qp, DestroyQp>;

/// The device named `name` (device_choice.hpp chose it), opened; an error
/// naming it when it is gone or cannot be opened.
[[nodiscard]] Result<DeviceHandle> open_device(std::string_view name);

/// `bytes` at `base` registered in `pd` for local and remote writes, once
/// check_can_pin() allowed them (its error names RLIMIT_MEMLOCK and the fix;
/// `what` says what the region is, e.g. "the pool of node 'camera'").
[[nodiscard]] Result<MrHandle> register_region(ibv_pd* pd, std::byte* base, std::size_t bytes, std::string_view what);

}  // namespace axon::rdma
