#include "transports/rdma/pin_limit.hpp"

#include <fmt/format.h>

#include <fstream>
#include <string>

#include "transports/shm/memory_options.hpp"

namespace axon::rdma {
namespace {

constexpr std::size_t kKiB = 1024;

std::size_t kib_rounded_up(std::size_t bytes) noexcept { return (bytes + kKiB - 1) / kKiB; }

std::string limit_text(rlim_t limit) {
  return limit == RLIM_INFINITY ? std::string("unlimited") : fmt::format("{} KiB", limit / kKiB);
}

// "VmPin:      1234 kB" of /proc/self/status, in bytes (0 when absent).
std::size_t pinned_bytes_now() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmPin:", 0) == 0) {
      return static_cast<std::size_t>(std::stoull(line.substr(6))) * kKiB;
    }
  }
  return 0;
}

}  // namespace

PinAllowance current_pin_allowance() {
  rlimit limit{};
  ::getrlimit(RLIMIT_MEMLOCK, &limit);
  return {.soft_limit = limit.rlim_cur,
          .hard_limit = limit.rlim_max,
          .ipc_lock = shm::has_ipc_lock_capability(),
          .pinned_bytes = pinned_bytes_now()};
}

Result<void> check_pin_allowance(std::size_t bytes, const PinAllowance& allowance, std::string_view what) {
  const std::size_t needed = allowance.pinned_bytes + bytes;
  if (allowance.ipc_lock || allowance.soft_limit == RLIM_INFINITY || needed <= allowance.soft_limit) {
    return {};
  }
  const std::size_t needed_kib = kib_rounded_up(needed);
  std::string text = fmt::format(
      "cannot register {} for RDMA: the memory a process registers counts against RLIMIT_MEMLOCK, whose soft "
      "limit is {} (hard limit {}); {} bytes ({} KiB) are needed in all, {} KiB of them pinned already, and the "
      "process lacks CAP_IPC_LOCK. ",
      what, limit_text(allowance.soft_limit), limit_text(allowance.hard_limit), needed, needed_kib,
      kib_rounded_up(allowance.pinned_bytes));
  if (allowance.hard_limit != RLIM_INFINITY && allowance.hard_limit < needed) {
    text += "The hard limit is too low as well, so only root can raise it. ";
  }
  return Error(ErrorCode::kNoSpace,
               text + fmt::format("Raise the limit to at least {0} KiB: `ulimit -l {0}` (or `ulimit -l unlimited`) "
                                  "in the shell that starts the program, a `<user> - memlock {0}` line in "
                                  "/etc/security/limits.conf, LimitMEMLOCK={0}K (or infinity) in its systemd "
                                  "unit, or `--ulimit memlock=-1` for docker run; or grant the program "
                                  "CAP_IPC_LOCK (`setcap cap_ipc_lock+ep <program>`); or make the pool smaller "
                                  "(nodes[].pool.chunk_classes)",
                                  needed_kib));
}

Result<void> check_can_pin(std::size_t bytes, std::string_view what) {
  return check_pin_allowance(bytes, current_pin_allowance(), what);
}

}  // namespace axon::rdma
