// A topic's deliveries and drops per second from two reads of its queues' counters (the publishers' pools,
// read_topic_connections()), as `axon monitor` shows them, summed over the topic's queues. A topic with no queue on
// this host (no subscriber here: its messages leave the host or go nowhere) has none. Its message rate is the
// publishers' own count instead (publish_rates.hpp), which a topic without subscriber has too.
//
// Thread safety: none needed (values and functions of their arguments). Allocates.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "axon/domain_view.hpp"

namespace axon::tools {

/// What one queue had counted when it was read.
struct QueueCount {
  std::uint64_t delivered = 0;
  std::uint64_t dropped = 0;  ///< Full, evicted and timed out.
};

/// Every queue's counts at one moment, by (publisher id, subscriber id).
struct QueueSample {
  std::int64_t at_ns = 0;  ///< CLOCK_MONOTONIC of the read; 0: no read yet.
  std::map<std::pair<std::uint64_t, std::uint64_t>, QueueCount> queues;
};

/// The counts of `connections`, read at `at_ns`.
[[nodiscard]] QueueSample sample_queues(const std::vector<ConnectionView>& connections, std::int64_t at_ns);

/// A topic's rates per second between two reads; -1 where not measured (no earlier read, or no queue of the topic
/// in both reads).
struct TopicRates {
  double delivered_per_s = -1;
  double dropped_per_s = -1;
};

/// The rates of topic slot `topic` from `before` to `now`.
[[nodiscard]] TopicRates topic_rates(std::uint32_t topic, const QueueSample& before,
                                     const std::vector<ConnectionView>& now, std::int64_t now_ns);

}  // namespace axon::tools
