// What the soak reads of one process each second, from /proc/PID: resident
// memory, open descriptors, mappings (and those of files in the shm
// directory), threads.
#pragma once

#include <optional>
#include <string>

namespace axon_bench {

struct ProcessSample {
  double rss_kib = 0;   ///< VmRSS of /proc/PID/status.
  double fds = 0;       ///< Entries of /proc/PID/fd.
  double maps = 0;      ///< Lines of /proc/PID/maps.
  double shm_maps = 0;  ///< Of those, mappings of files in the shm directory (AXON_SHM_DIR, else /dev/shm).
  double threads = 0;   ///< Threads of /proc/PID/status.
};

/// Reads process `pid`, counting the mappings of files under `shm_dir` (no
/// trailing slash); std::nullopt when it is gone (or not ours to read).
/// Allocates nothing that outlives the call.
std::optional<ProcessSample> read_process_sample(int pid, const std::string& shm_dir);

}  // namespace axon_bench
