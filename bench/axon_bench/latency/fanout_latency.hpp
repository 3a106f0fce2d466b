// `axon-bench latency --fanout 1,8,32,100`: one publisher process, N
// subscriber processes, one message in flight; the latency of a message is
// that of its last subscriber's receipt (publish_time_ns to take()).
#pragma once

#include <cstddef>
#include <cstdint>

#include "results/result_log.hpp"

namespace axon_bench {

/// Subscriber processes a fan-out latency case may have.
inline constexpr std::uint32_t kMaxFanoutLatencySubscribers = 128;

struct FanoutLatencyCase {
  std::size_t payload_bytes = 64;  ///< Must satisfy is_supported_payload().
  std::uint32_t subscribers = 1;   ///< 1..kMaxFanoutLatencySubscribers processes.
  std::uint64_t samples = 0;       ///< Messages recorded ...
  std::uint64_t warmup = 0;        ///< ... after this many unrecorded ones.
  std::uint32_t domain_id = 0;     ///< A domain no one else uses.
};

/// Runs `c`: the publisher and each subscriber a forked process, the
/// subscribers sleeping in an axon::WaitSet (WaitStrategy::blocking(): more
/// processes than CPUs must not busy-poll). Throws std::runtime_error with
/// the reason when it fails (and removes the domain's files).
CaseResult run_fanout_latency_case(const FanoutLatencyCase& c);

}  // namespace axon_bench
