// Whether this process may pin (register for RDMA) a given number of bytes:
// pages registered with ibv_reg_mr count against RLIMIT_MEMLOCK (the
// kernel's pinned_vm, apart from what mlock locked) unless the process has
// CAP_IPC_LOCK. ibv_reg_mr itself would only fail with ENOMEM, so the
// transport checks first and says which limit, how much and how to raise it.
//
// Thread safety: any thread; allocates (start-up only).
#pragma once

#include <sys/resource.h>

#include <cstddef>
#include <string_view>

#include "axon/result.hpp"

namespace axon::rdma {

/// What the kernel will let this process pin.
struct PinAllowance {
  rlim_t soft_limit = 0;  ///< RLIMIT_MEMLOCK, bytes (RLIM_INFINITY: none).
  rlim_t hard_limit = 0;
  bool ipc_lock = false;         ///< CAP_IPC_LOCK: the limit does not apply.
  std::size_t pinned_bytes = 0;  ///< Pinned already (VmPin of /proc/self/status).
};

/// This process's allowance now.
[[nodiscard]] PinAllowance current_pin_allowance();

/// kNoSpace unless `bytes` more can be pinned under `allowance`; the message
/// names `what` (e.g. "the pool of node 'camera' (61.3 MiB)"), RLIMIT_MEMLOCK
/// with both limits, the bytes needed in all, and how to raise the limit,
/// grant CAP_IPC_LOCK or make the pool smaller.
[[nodiscard]] Result<void> check_pin_allowance(std::size_t bytes, const PinAllowance& allowance, std::string_view what);

/// check_pin_allowance() with current_pin_allowance().
[[nodiscard]] Result<void> check_can_pin(std::size_t bytes, std::string_view what);

}  // namespace axon::rdma
