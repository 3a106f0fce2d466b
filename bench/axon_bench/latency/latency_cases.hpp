// One case of `axon-bench latency`: two processes, each with its own
// axon::Node, exchanging Payload<N> messages through shared memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "results/result_log.hpp"

namespace axon_bench {

enum class LatencyMode {
  kOneWay,    ///< Publisher -> subscriber; latency = receive time - start stamp.
  kPingPong,  ///< ping -> pong -> ping; latency = round trip / 2.
};

/// Where a one-way latency starts (without --rate).
enum class StartStamp {
  kPublish,  ///< SampleInfo::publish_time_ns, stamped inside publish().
  kLoan,     ///< The publisher's clock just before loan(): loan, write and publish count too.
};

struct LatencyCase {
  LatencyMode mode = LatencyMode::kOneWay;
  std::size_t payload_bytes = 64;  ///< Must satisfy is_supported_payload().
  bool touch = false;              ///< Write and read every payload byte.
  double rate_hz = 0;              ///< 0: next message once the previous one arrived.
  StartStamp start_at = StartStamp::kPublish;
  std::uint64_t samples = 0;      ///< Messages (round trips) recorded ...
  std::uint64_t warmup = 0;       ///< ... after this many unrecorded ones.
  std::vector<int> cpus{-1, -1};  ///< Worker 0 (publisher, ping) and worker 1.
  std::uint32_t domain_id = 0;    ///< A domain no one else uses.
};

/// Runs `c` as two forked processes. Throws std::runtime_error with the
/// reason when it fails (and removes the domain's files it left behind).
CaseResult run_latency_case(const LatencyCase& c);

}  // namespace axon_bench
