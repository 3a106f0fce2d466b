#include "src/tools/axon/graph/monitor_round.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace axon::tools {
namespace {

/// The figure a sort compares (negative: unknown).
double figure(const TopicRound& t, MonitorSort sort) noexcept {
  switch (sort) {
    case MonitorSort::kRate: return t.rate_hz;
    case MonitorSort::kBandwidth: return t.bytes_per_s;
    case MonitorSort::kP99: return static_cast<double>(t.p99_ns);
    case MonitorSort::kDrops: return t.dropped_per_s;
    case MonitorSort::kQueued: return static_cast<double>(t.queued);
    case MonitorSort::kName: break;
  }
  return 0;
}

}  // namespace

const std::vector<std::string>& sort_words() {
  static const std::vector<std::string> kWords = {"name", "rate", "bandwidth", "p99", "drops", "queued"};
  return kWords;
}

std::optional<MonitorSort> parse_sort(const std::string& word) {
  const auto& words = sort_words();
  const auto it = std::ranges::find(words, word);
  if (it == words.end()) {
    return std::nullopt;
  }
  return static_cast<MonitorSort>(it - words.begin());
}

const char* sort_word(MonitorSort sort) noexcept { return sort_words()[static_cast<std::size_t>(sort)].c_str(); }

void sort_topics(std::vector<TopicRound>& topics, MonitorSort sort) {
  std::ranges::stable_sort(topics, [sort](const TopicRound& a, const TopicRound& b) {
    if (sort != MonitorSort::kName) {
      const double fa = figure(a, sort);
      const double fb = figure(b, sort);
      if (fa != fb) {
        return fa > fb;  // unknown (-1) below every known figure
      }
    }
    return a.name < b.name;
  });
}

Round MonitorCounters::look(const DomainView& view, const TopicConnections& queues, const LiveStatsView& stats,
                            std::int64_t now_ns, std::int64_t start_ns) {
  Round round{.at_s = static_cast<double>(now_ns - start_ns) / 1e9, .topics = {}, .notes = {}};
  for (const TopicView& t : view.topics) {
    TopicRound r{.name = t.name,
                 .publishers = static_cast<std::size_t>(std::ranges::count_if(
                     view.publishers, [&](const EndpointView& e) { return e.topic_slot == t.slot; })),
                 .subscribers = static_cast<std::size_t>(std::ranges::count_if(
                     view.subscribers, [&](const EndpointView& e) { return e.topic_slot == t.slot; }))};

    // Rate and bandwidth: the publishers' own counts, in their nodes' statistics (as `axon topic list`).
    const PublishRates published = publish_rates(t.name, published_, stats.publishers, now_ns);
    r.rate_hz = published.rate_hz;
    r.bytes_per_s = published.bytes_per_s;

    // Deliveries, drops and fill: the queues in the publishers' pools.
    for (const ConnectionView& c : queues.connections) {
      if (c.topic_slot != t.slot) {
        continue;
      }
      r.queued += c.queued;
      // Fuller by fill/depth, compared without division: queued * other_depth > other_queued * depth.
      if (c.depth > 0 && (r.fullest_depth == 0 ||
                          std::uint64_t{c.queued} * r.fullest_depth > std::uint64_t{r.fullest_queued} * c.depth)) {
        r.fullest_queued = c.queued;
        r.fullest_depth = c.depth;
      }
    }
    const TopicRates rates = topic_rates(t.slot, queues_, queues.connections, now_ns);
    r.delivered_per_s = rates.delivered_per_s;
    r.dropped_per_s = rates.dropped_per_s;

    // Latency: the worst subscriber's, of those with a measured take in the window.
    for (const SubscriberLatencyView& s : stats.subscribers) {
      if (s.topic == t.name && s.count > 0) {
        r.p50_ns = std::max(r.p50_ns, static_cast<std::int64_t>(s.p50_ns));
        r.p99_ns = std::max(r.p99_ns, static_cast<std::int64_t>(s.p99_ns));
      }
    }
    round.topics.push_back(std::move(r));
  }
  published_ = sample_published(stats.publishers, now_ns);
  queues_ = sample_queues(queues.connections, now_ns);
  return round;
}

}  // namespace axon::tools
