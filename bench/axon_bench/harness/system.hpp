// Host helpers for axon-bench: the clock, CPU pinning, CPU time used and a
// description of the machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "src/base/cpu_relax.hpp"

namespace axon_bench {

/// CLOCK_MONOTONIC in nanoseconds: the clock axon stamps publish_time_ns with.
inline std::int64_t now_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// The body of a busy-poll loop: axon's portable spin hint.
using axon::cpu_relax;

/// strerror() without its shared buffer: the text of errno value `err`.
std::string error_text(int err);

/// CPUs this process may run on now.
int online_cpu_count() noexcept;

/// The CPUs a pair of benchmark processes runs on: `requested` when given
/// (two entries), else 0 and 1 when the host has two or more CPUs, else
/// {-1, -1} (not pinned). Throws std::invalid_argument on a bad list.
std::vector<int> choose_cpu_pair(const std::vector<int>& requested);

/// Pins the calling thread (and the threads it creates later) to `cpu`;
/// does nothing for cpu < 0. Returns an empty string or what went wrong.
std::string pin_to_cpu(int cpu);

/// User and system CPU time of this process (all threads) and the wall
/// clock, read together.
struct CpuTimes {
  std::int64_t user_ns = 0;
  std::int64_t system_ns = 0;
  std::int64_t wall_ns = 0;

  static CpuTimes now() noexcept;
};

/// CPU time used between two readings as a percentage of the wall time
/// (100 = one core busy all the time).
double cpu_percent(const CpuTimes& begin, const CpuTimes& end) noexcept;

/// A domain id for case `index` of this run that nothing else uses: a high
/// id derived from our pid.
std::uint32_t domain_for_case(std::size_t index) noexcept;

/// Removes the named files of `domain` (registry, lock, sockets) after a
/// failed run killed its workers before they could leave.
void remove_domain_files(std::uint32_t domain);
/// The same in directory `dir` (a virtual host's /dev/shm, seen from outside it).
void remove_domain_files_in(const std::string& dir, std::uint32_t domain);

/// What the figures were measured on.
struct MachineInfo {
  std::string cpu_model;  ///< /proc/cpuinfo "model name".
  int cores = 0;          ///< Online CPUs.
  std::string kernel;     ///< uname -r.
};

MachineInfo machine_info();

}  // namespace axon_bench
