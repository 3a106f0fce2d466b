// Real-time options for threads that run callbacks: CPU affinity and
// SCHED_FIFO priority.
#pragma once

#include <vector>

#include "axon/result.hpp"

namespace axon {

struct ThreadOptions {
  /// CPUs the thread may run on (empty: leave the affinity as it is).
  std::vector<int> cpu_affinity;
  /// SCHED_FIFO priority 1..99 (0: keep the normal scheduling policy). Needs
  /// CAP_SYS_NICE or an RLIMIT_RTPRIO (`ulimit -r`) of at least this value.
  int sched_fifo_priority = 0;
};

/// Applies `options` to the calling thread. Errors say what is missing: a CPU
/// outside the allowed set (named, with the set), or the privilege for
/// SCHED_FIFO (CAP_SYS_NICE or RLIMIT_RTPRIO, with the current limit and how
/// to raise it). Slow path: system calls, may allocate.
Result<void> apply_thread_options(const ThreadOptions& options);

}  // namespace axon
