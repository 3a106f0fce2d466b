// Runs a benchmark case as two real processes (through run_process_group):
// the parent forks two workers, pins them to their CPUs, shows progress
// while they run and collects what they report through shared memory. Also
// the shared-memory helpers every multi-process benchmark uses.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/system.hpp"
#include "results/result_log.hpp"

namespace axon_bench {

inline constexpr std::size_t kCacheLine = 64;

/// Anonymous MAP_SHARED memory made before fork(): the parent and both
/// workers see the same (zero-filled) bytes. Move-only.
class SharedMapping {
 public:
  /// Throws std::system_error when mmap fails.
  explicit SharedMapping(std::size_t bytes);
  ~SharedMapping();
  SharedMapping(SharedMapping&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  SharedMapping& operator=(SharedMapping&&) = delete;
  SharedMapping(const SharedMapping&) = delete;
  SharedMapping& operator=(const SharedMapping&) = delete;

  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// One T in its own shared mapping (T holds atomics, not pointers).
template <class T>
class Shared {
 public:
  Shared() : mapping_(sizeof(T)), value_(new (mapping_.data()) T()) {}
  ~Shared() { value_->~T(); }
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;
  T& operator*() const noexcept { return *value_; }
  T* operator->() const noexcept { return value_; }

 private:
  SharedMapping mapping_;
  T* value_;
};

/// `count` values in a shared mapping, zero-filled.
template <class T>
class SharedArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  explicit SharedArray(std::size_t count) : mapping_(count * sizeof(T) + 1), count_(count) {}
  [[nodiscard]] T* data() const noexcept { return reinterpret_cast<T*>(mapping_.data()); }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  T& operator[](std::size_t i) const noexcept { return data()[i]; }

 private:
  SharedMapping mapping_;
  std::size_t count_;
};

/// What one worker reports to the parent. Written by that worker only and
/// read by the parent after waitpid() (which orders it).
struct SideReport {
  CpuTimes measure_begin;  ///< Taken when the measured phase starts ...
  CpuTimes measure_end;    ///< ... and when it ends.
  std::uint64_t dropped = 0;
  std::uint64_t payload_bytes = 0;  ///< Size of the messages received (serializer cases).
  char error[512] = {};
};

/// The shared state of one pair run. Thread safety / memory ordering: each
/// atomic has one writer, named below; readers load with acquire.
struct PairControl {
  /// Start barrier: both workers increment, then wait for 2.
  alignas(kCacheLine) std::atomic<std::uint32_t> arrived{0};
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
  WorkerBody worker[2];
  std::chrono::seconds timeout{300};  ///< Both workers are killed after this.
};

/// Forks the two workers and waits for them. Returns an empty string on
/// success, else what failed (a worker's own message, a crash, a timeout).
std::string run_pair(const PairJob& job, PairControl& control);

/// Worker side: the start barrier (both workers connected and ready).
void arrive_and_wait(PairControl& control) noexcept;

/// Worker side: records `message` as worker `side`'s error; returns 1 for
/// `return fail(...)`.
int fail(PairControl& control, int side, std::string_view message) noexcept;

/// Parent side, after run_pair(): the CPU of worker 0 (the sender) and
/// worker 1 (the receiver) over their measured phases, and their sum.
void record_pair_cpu(CaseResult& result, const PairControl& control) noexcept;

}  // namespace axon_bench
