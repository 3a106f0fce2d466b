#include "src/tools/axon/graph/publish_rates.hpp"

namespace axon::tools {

PublishSample sample_published(const std::vector<PublisherTrafficView>& publishers, std::int64_t at_ns) {
  PublishSample sample{.at_ns = at_ns, .publishers = {}};
  for (const PublisherTrafficView& p : publishers) {
    sample.publishers[p.publisher_id] = PublishedCount{.messages = p.published, .bytes = p.published_bytes};
  }
  return sample;
}

PublishRates publish_rates(const std::string& topic, const PublishSample& before,
                           const std::vector<PublisherTrafficView>& now, std::int64_t now_ns) {
  PublishRates rates;
  if (before.at_ns <= 0 || now_ns <= before.at_ns) {
    return rates;
  }
  const double dt_s = static_cast<double>(now_ns - before.at_ns) / 1e9;
  double messages = 0;
  double bytes = 0;
  bool measured = false;
  for (const PublisherTrafficView& p : now) {
    if (p.topic != topic) {
      continue;
    }
    const auto seen = before.publishers.find(p.publisher_id);
    if (seen == before.publishers.end()) {
      continue;  // a new publisher: its rate from the next read on
    }
    // Counts only grow while a publisher lives (ids carry a generation): one that went down is a torn read.
    if (p.published < seen->second.messages || p.published_bytes < seen->second.bytes) {
      continue;
    }
    messages += static_cast<double>(p.published - seen->second.messages) / dt_s;
    bytes += static_cast<double>(p.published_bytes - seen->second.bytes) / dt_s;
    measured = true;
  }
  if (measured) {
    rates.rate_hz = messages;
    rates.bytes_per_s = bytes;
  }
  return rates;
}

}  // namespace axon::tools
