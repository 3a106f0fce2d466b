// One case of `axon-bench throughput`: one publisher process sending
// Payload<N> messages as fast as it can to N subscriber processes, lossless
// (SubscriberQos::overflow = kBlockPublisher), for a fixed time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "harness/shared_memory.hpp"
#include "harness/system.hpp"
#include "harness/wait.hpp"
#include "results/result_log.hpp"

namespace axon_bench {

inline constexpr std::uint32_t kMaxThroughputSubscribers = 32;

struct ThroughputCase {
  std::size_t payload_bytes = 64;  ///< Must satisfy is_supported_payload().
  std::uint32_t subscribers = 1;
  double duration_s = 2;     ///< Measured phase, after the warm-up.
  std::uint64_t warmup = 0;  ///< Messages sent first and not counted.
  std::uint32_t depth = 64;  ///< Each subscriber's queue.
  bool touch = false;        ///< Write and read every payload byte.
  /// How an idle subscriber waits: polling take(), or (wait.executor) a
  /// SingleThreadedExecutor with the strategy runs a callback per message.
  BenchWait wait;
  std::vector<int> cpus;        ///< Publisher, then each subscriber (-1 or missing: not pinned).
  std::uint32_t domain_id = 0;  ///< A domain no one else uses.
};

/// What one process of a throughput case reports. Written by that process
/// only; read by the parent after waitpid().
struct FanoutReport {
  CpuTimes measure_begin;
  CpuTimes measure_end;
  std::int64_t first_ns = 0;   ///< Subscriber: when the first counted message arrived.
  std::int64_t last_ns = 0;    ///< Subscriber: when the last message arrived.
  std::uint64_t received = 0;  ///< Subscriber: counted messages received.
  std::uint64_t lost = 0;      ///< Subscriber: gaps in the indices. Publisher: publishes that timed out.
  ErrorText error;
};

/// Shared state of a throughput case. Thread safety / memory ordering: each
/// atomic has one writer, named below; readers load with acquire.
struct FanoutControl {
  /// Every process arrives before any starts.
  alignas(kCacheLine) StartBarrier start;
  /// Publisher: elapsed milliseconds of the measured phase (display only).
  alignas(kCacheLine) std::atomic<std::uint64_t> progress_ms{0};
  /// Publisher: messages sent in all, 0 while it still sends.
  alignas(kCacheLine) std::atomic<std::uint64_t> total{0};
  /// Subscribers: how many are through (the publisher's pool outlives them).
  alignas(kCacheLine) std::atomic<std::uint32_t> finished{0};
  alignas(kCacheLine) FanoutReport report[kMaxThroughputSubscribers + 1];  ///< [0] publisher, [1 + i] subscriber i.
};

/// Runs `c`. Throws std::runtime_error with the reason when it fails.
CaseResult run_throughput_case(const ThroughputCase& c);

}  // namespace axon_bench
