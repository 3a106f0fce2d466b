// A whole domain of idle nodes, for what its size costs: N nodes in P
// processes (node i in process i % P), T topics in a ring (topic t published
// by node t % N, subscribed by node (t + 1) % N, so every link crosses
// processes). The parent forks the processes, which create their nodes and
// endpoints and report when all of them are connected; then, as the command
// asks, the parent measures the CPU of every process while all idle
// (`axon-bench idle`), or kills one process with SIGKILL and the others
// report when they have let go of its endpoints (`axon-bench discovery`).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/shared_memory.hpp"
#include "harness/system.hpp"

namespace axon_bench {

/// What the domain looks like.
struct DomainShape {
  std::uint32_t nodes = 8;
  std::uint32_t processes = 8;
  std::uint32_t topics = 8;
  std::uint32_t liveness_ms = 50;  ///< NodeOptions::liveness_period_ms.
  std::uint32_t domain_id = 0;

  [[nodiscard]] std::uint32_t process_of(std::uint32_t node) const noexcept { return node % processes; }
  [[nodiscard]] std::uint32_t publisher_of(std::uint32_t topic) const noexcept { return topic % nodes; }
  [[nodiscard]] std::uint32_t subscriber_of(std::uint32_t topic) const noexcept { return (topic + 1) % nodes; }
  /// "200 nodes / 20 processes / 2000 topics".
  [[nodiscard]] std::string describe() const;
};

/// Phases, in the futex word DomainControl::phase.
enum DomainPhase : std::uint32_t { kSettingUp = 0, kMeasuring = 1, kKilled = 2, kStopping = 3 };

/// Start and phases. Memory ordering: each process writes its report, then
/// increments `created` / `connected` (release); the parent reads the count
/// (acquire), then the reports. `phase` is written by the parent (release,
/// then FUTEX_WAKE) and read by the processes (acquire).
struct DomainControl {
  alignas(kCacheLine) std::atomic<std::uint32_t> created{0};
  alignas(kCacheLine) std::atomic<std::uint32_t> connected{0};
  alignas(kCacheLine) std::atomic<std::uint32_t> detected{0};
  alignas(kCacheLine) std::atomic<std::uint32_t> phase{kSettingUp};
  std::atomic<std::int64_t> start_ns{0};  ///< Before the fork.
  std::atomic<std::int64_t> kill_ns{0};   ///< Just before the SIGKILL.
};

/// Written by one process; read by the parent after the counter that says so.
struct DomainProcessReport {
  pid_t pid;                  ///< The process holding the nodes (the victim's is a grandchild).
  std::uint32_t nodes;        ///< Its nodes.
  std::int64_t connected_ns;  ///< Every endpoint of its nodes connected.
  std::int64_t detected_ns;   ///< Its links to the killed process gone (0: it had none).
  CpuTimes idle_begin;        ///< getrusage at the start of the measured idle window ...
  CpuTimes idle_end;          ///< ... and at its end.
  ErrorText error;
};

struct DomainShared {
  explicit DomainShared(const DomainShape& shape) : reports(shape.processes) {}
  Shared<DomainControl> control;
  SharedArray<DomainProcessReport> reports;
};

/// The process killed by `axon-bench discovery`: the last one.
inline std::uint32_t victim_of(const DomainShape& shape) noexcept { return shape.processes - 1; }

/// Body of worker `index`. With `victim`, the nodes live in a grandchild the
/// parent kills; the worker waits for it and exits 0.
int run_domain_worker(const DomainShape& shape, DomainShared& shared, std::uint32_t index, bool victim);

/// Sets the phase and wakes every process waiting for it.
void set_domain_phase(DomainControl& control, DomainPhase phase) noexcept;

/// utime + stime of `pid` from /proc/<pid>/stat, in nanoseconds (clock-tick
/// resolution); -1 when it cannot be read.
std::int64_t proc_cpu_ns(pid_t pid);

}  // namespace axon_bench
