// What the workers of `axon-bench latency` share: their topics, the send
// schedule, and the set-up of each side's node. Internal to
// latency_cases.cpp and the *_workers.hpp headers it includes.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "harness/endpoint_calls.hpp"
#include "harness/pair_worker.hpp"
#include "harness/worker_setup.hpp"
#include "latency/latency_cases.hpp"

namespace axon_bench::workers {

inline constexpr std::string_view kOneWayTopic = "axon_bench/oneway";
inline constexpr std::string_view kPingTopic = "axon_bench/ping";
inline constexpr std::string_view kPongTopic = "axon_bench/pong";

/// Nanoseconds between messages with --rate; 0: one in flight.
inline std::int64_t period_ns(const LatencyCase& c) { return c.rate_hz > 0 ? std::llround(1e9 / c.rate_hz) : 0; }

/// A latency worker named `node` that publishes and/or subscribes T of the
/// case's size: a pool sized for it where it publishes, a queue as deep as
/// that pool where it subscribes.
inline WorkerSpec latency_worker(std::uint32_t domain_id, std::size_t payload_bytes, std::string node,
                                 std::string_view publishes, std::string_view subscribes) {
  return {.node = std::move(node),
          .options = node_in_domain(
              domain_id, publishes.empty() ? std::vector<axon::ChunkClassConfig>{} : chunk_classes_for(payload_bytes)),
          .publishes = publishes,
          .subscribes = subscribes,
          .qos = axon::SubscriberQos{.depth = depth_for(payload_bytes)},
          .subscribers = 1};
}

inline WorkerSpec latency_worker(const LatencyCase& c, std::string node, std::string_view publishes,
                                 std::string_view subscribes) {
  return latency_worker(c.domain_id, c.payload_bytes, std::move(node), publishes, subscribes);
}

/// Publishes `stamp` for worker `side`, which `pacer` paces. A full queue
/// drops the message on a schedule (counted) and is a failure with one
/// message in flight. Returns 0, or the worker's exit status after fail().
template <class T>
int publish_one(axon::Publisher<T>& pub, Stamp stamp, bool touch, const Pacer& pacer, PairControl& control, int side) {
  auto status = publish_stamped(pub, stamp, touch);
  if (!status) {
    return fail_with(control, side, "publish", status);
  }
  if (status->dropped != 0) {
    if (!pacer.on_schedule()) {
      return fail(control, side, "the subscriber's queue was full with one message in flight");
    }
    ++control.side[side].dropped;
  }
  return 0;
}

}  // namespace axon_bench::workers
