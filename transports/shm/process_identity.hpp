// Who a process is, in a way that survives pid reuse: pid plus start time.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace axon::shm {

struct ProcessIdentity {
  pid_t pid = 0;
  std::uint64_t start_time = 0;  ///< Field 22 of /proc/<pid>/stat (clock ticks after boot).
};

/// This process.
ProcessIdentity self_identity() noexcept;
/// The process that has `pid` now (start time 0 when it cannot be read).
ProcessIdentity identity_of(pid_t pid) noexcept;

/// True while the process `id` names runs: it exists, is not a zombie, and
/// started at `id.start_time` (so a recycled pid is not taken for it).
/// Reads /proc: for discovery and liveness checks, never the data path.
bool is_alive(const ProcessIdentity& id) noexcept;

}  // namespace axon::shm
