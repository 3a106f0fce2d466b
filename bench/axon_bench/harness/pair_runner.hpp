// Runs a benchmark case as two real processes (through run_process_group):
// the parent forks two workers, pins them to their CPUs, shows progress
// while they run and collects what they report through shared memory.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/shared_memory.hpp"
#include "harness/system.hpp"
#include "results/result_log.hpp"

namespace axon_bench {

/// A latency slot whose message was dropped.
inline constexpr std::int64_t kMissing = -1;
/// `ack` value meaning "the receiving worker is through".
inline constexpr std::uint64_t kFinished = ~std::uint64_t{0};

/// What one worker reports to the parent. Written by that worker only and
/// read by the parent after waitpid() (which orders it).
struct SideReport {
  CpuTimes measure_begin;  ///< Taken when the measured phase starts ...
  CpuTimes measure_end;    ///< ... and when it ends.
  std::uint64_t dropped = 0;
  std::uint64_t payload_bytes = 0;  ///< Size of the messages received (serializer cases).
  ErrorText error;
};

/// The shared state of one pair run. Thread safety / memory ordering: each
/// atomic has one writer, named below; readers load with acquire.
struct PairControl {
  /// Both workers arrive (arrive_and_wait()).
  alignas(kCacheLine) StartBarrier start;
  /// Written by the measuring worker: samples recorded so far (for the
  /// parent's progress line).
  alignas(kCacheLine) std::atomic<std::uint64_t> progress{0};
  /// Written by worker 1: how many messages it has handled (flow control
  /// of one-way runs, so that only one message is in flight).
  alignas(kCacheLine) std::atomic<std::uint64_t> ack{0};
  /// Written by worker 0: it sent everything.
  alignas(kCacheLine) std::atomic<std::uint32_t> done{0};
  alignas(kCacheLine) SideReport side[2];
};

/// Body of a worker: runs pinned in the child; returns its exit status
/// (0 = success; otherwise it wrote side[i].error, see fail()).
using WorkerBody = std::function<int(PairControl& control)>;

struct PairJob {
  std::string label;                 ///< Shown in the progress line.
  std::vector<int> cpus{-1, -1};     ///< CPU of worker 0 and worker 1 (-1: not pinned).
  std::uint64_t progress_total = 0;  ///< Value of `progress` at the end.
  WorkerBody worker[2]{};
  std::chrono::seconds timeout{300};  ///< Both workers are killed after this.
};

/// Forks the two workers and waits for them. Returns an empty string on
/// success, else what failed (a worker's own message, a crash, a timeout).
std::string run_pair(const PairJob& job, PairControl& control);

/// run_pair() that throws std::runtime_error("<label>: <what failed>") on
/// failure, after removing the files its killed workers left in the domain
/// `domain_id` (none: they had no domain of their own).
void run_pair_checked(const PairJob& job, PairControl& control, std::optional<std::uint32_t> domain_id);

/// Worker side: the start barrier (both workers connected and ready).
void arrive_and_wait(PairControl& control) noexcept;

/// Worker side: records `message` as worker `side`'s error; returns 1 for
/// `return fail(...)`.
inline int fail(PairControl& control, int side, std::string_view message) noexcept {
  return control.side[side].error.set(message);
}

/// fail() with what failed and the error of `result`.
template <class R>
int fail_with(PairControl& control, int side, std::string_view what, const R& result) {
  return fail(control, side, std::string(what) + ": " + std::string(result.error().message()));
}

/// Parent side, after run_pair(): the CPU of worker 0 (the sender) and
/// worker 1 (the receiver) over their measured phases, and their sum.
void record_pair_cpu(CaseResult& result, const PairControl& control) noexcept;

/// Parent side, after run_pair(): the recorded latencies of `slots` moved to
/// its front (the kMissing ones of dropped messages left out).
std::span<std::int64_t> recorded_latencies(SharedArray<std::int64_t>& slots) noexcept;

}  // namespace axon_bench
