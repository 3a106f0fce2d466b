#include "src/tools/axon/graph/queue_rates.hpp"

#include <algorithm>

namespace axon::tools {

QueueSample sample_queues(const std::vector<ConnectionView>& connections, std::int64_t at_ns) {
  QueueSample sample{.at_ns = at_ns, .queues = {}};
  for (const ConnectionView& c : connections) {
    sample.queues[{c.publisher_id, c.subscriber_id}] =
        QueueCount{.delivered = c.delivered, .dropped = c.dropped_full + c.dropped_oldest + c.dropped_timeout};
  }
  return sample;
}

TopicRates topic_rates(std::uint32_t topic, const QueueSample& before, const std::vector<ConnectionView>& now,
                       std::int64_t now_ns) {
  TopicRates rates;
  if (before.at_ns <= 0 || now_ns <= before.at_ns) {
    return rates;
  }
  const double dt_s = static_cast<double>(now_ns - before.at_ns) / 1e9;
  double delivered = 0;
  double dropped = 0;
  bool measured = false;
  for (const ConnectionView& c : now) {
    if (c.topic_slot != topic) {
      continue;
    }
    const auto seen = before.queues.find({c.publisher_id, c.subscriber_id});
    if (seen == before.queues.end()) {
      continue;  // a new queue: its rate from the next read on
    }
    // Counters only grow while a queue lives; a queue replaced under the same ids would count from 0 again.
    const std::uint64_t now_dropped = c.dropped_full + c.dropped_oldest + c.dropped_timeout;
    const auto d_delivered = static_cast<double>(c.delivered - std::min(c.delivered, seen->second.delivered));
    const auto d_dropped = static_cast<double>(now_dropped - std::min(now_dropped, seen->second.dropped));
    delivered += d_delivered / dt_s;
    dropped += d_dropped / dt_s;
    measured = true;
  }
  if (measured) {
    rates.delivered_per_s = delivered;
    rates.dropped_per_s = dropped;
  }
  return rates;
}

}  // namespace axon::tools
