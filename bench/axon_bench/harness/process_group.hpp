// Runs a benchmark as several real processes: the parent forks one child per
// worker, shows progress while they run, kills them all when one fails or
// the time runs out, and says which one failed and why. The latency pairs,
// the throughput fan-out and the scenario's components all run through it.
// The parent never creates anything of axon's, so each child starts clean.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "harness/shared_memory.hpp"

namespace axon_bench {

struct ProcessGroupJob {
  std::string label;        ///< Shown in the progress line and in errors.
  std::size_t workers = 0;  ///< Children to fork.
  /// Body of child `index`; returns its exit status (0 = success). Runs in
  /// the child only; exceptions are caught and kept in `error_of(index)`.
  std::function<int(std::size_t index)> body;
  /// Where child `index` keeps why it failed (shared memory): the child
  /// writes it, the parent reads it after the child exited.
  std::function<ErrorText&(std::size_t index)> error_of;
  /// Parent side: what to call child `index` in messages ("worker 0").
  std::function<std::string(std::size_t index)> name_of;
  /// Parent side, every poll period while children run: the progress shown
  /// (units done). May be empty.
  std::function<std::uint64_t()> progress;
  std::uint64_t progress_total = 0;  ///< Units when done; 0: show only the time.
  std::string progress_unit = "samples";
  /// Parent side, every poll period while children run (e.g. start a phase
  /// once every child is ready). May be empty.
  std::function<void()> tick;
  /// Parent side, once per child right after fork(): its index and pid (a
  /// caller that watches the children's /proc entries). May be empty.
  std::function<void(std::size_t index, int pid)> started;
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};  ///< Every child is killed after this.
};

/// Forks the children and waits for all of them. Returns an empty string on
/// success, else what failed first (a child's own message, a crash, a
/// timeout); the other children are then killed.
std::string run_process_group(const ProcessGroupJob& job);

}  // namespace axon_bench
