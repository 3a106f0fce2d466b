// One case of `axon-bench wakeup`: a publisher process and a subscriber
// process whose SingleThreadedExecutor runs a callback per message with one
// axon::WaitStrategy; and the idle case, in which nothing is published and
// only the subscriber's CPU time is measured.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "results/result_log.hpp"
#include <axon/wait_strategy.hpp>

namespace axon_bench {

enum class WakeupPattern {
  /// One message in flight: after the subscriber's callback acknowledged the
  /// previous one, the publisher busy-waits a random gap, then publishes.
  /// Latency = callback entry - SampleInfo::publish_time_ns.
  kGap,
  /// A fixed rate; latency = callback entry - the scheduled send time, so a
  /// stall delays every later message too (no coordinated omission).
  kRate,
};

struct WakeupCase {
  WakeupPattern pattern = WakeupPattern::kGap;
  std::size_t payload_bytes = 64;  ///< Must satisfy is_supported_payload().
  axon::WaitStrategy wait = axon::WaitStrategy::blocking();
  double rate_hz = 10'000;           ///< kRate only.
  std::int64_t gap_min_ns = 50'000;  ///< kGap: the gap is uniform in [min, max].
  std::int64_t gap_max_ns = 200'000;
  std::uint64_t samples = 0;      ///< Messages recorded ...
  std::uint64_t warmup = 0;       ///< ... after this many unrecorded ones.
  std::vector<int> cpus{-1, -1};  ///< Publisher, subscriber.
  std::uint32_t domain_id = 0;    ///< A domain no one else uses.
};

/// Runs `c` as two forked processes. Throws std::runtime_error with the
/// reason when it fails (and removes the domain's files it left behind).
CaseResult run_wakeup_case(const WakeupCase& c);

struct IdleCase {
  axon::WaitStrategy wait = axon::WaitStrategy::blocking();
  double seconds = 5;  ///< How long the subscriber's executor spins with nothing to do.
  /// The reference: the subscriber's thread sleeps instead of spinning an
  /// executor, so only the node's own service thread runs (`wait` unused).
  bool node_only = false;
  std::vector<int> cpus{-1, -1};  ///< Publisher (connected, silent), subscriber.
  std::uint32_t domain_id = 0;
};

/// CPU use of an idle subscriber (and of its silent publisher): a record
/// without latencies, pattern "idle". Throws std::runtime_error on failure.
CaseResult run_idle_case(const IdleCase& c);

}  // namespace axon_bench
