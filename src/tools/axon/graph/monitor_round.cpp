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

/// A count that went down belongs to an entry reused in between (a new endpoint with the same id cannot happen:
/// ids carry a generation) or a torn read: no rate from it.
double per_s(std::uint64_t now, std::uint64_t before, double dt_s) noexcept {
  return now >= before ? static_cast<double>(now - before) / dt_s : -1;
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
  const double dt_s = last_ns_ > 0 && now_ns > last_ns_ ? static_cast<double>(now_ns - last_ns_) / 1e9 : 0;
  std::map<std::uint64_t, Published> publishers_now;
  for (const TopicView& t : view.topics) {
    TopicRound r{.name = t.name,
                 .publishers = static_cast<std::size_t>(std::ranges::count_if(
                     view.publishers, [&](const EndpointView& e) { return e.topic_slot == t.slot; })),
                 .subscribers = static_cast<std::size_t>(std::ranges::count_if(
                     view.subscribers, [&](const EndpointView& e) { return e.topic_slot == t.slot; }))};

    // Rate and bandwidth: the publishers' own counts, in their nodes' statistics.
    double messages = 0;
    double bytes = 0;
    bool measured = false;
    for (const PublisherTrafficView& p : stats.publishers) {
      if (p.topic != t.name) {
        continue;
      }
      publishers_now[p.publisher_id] = Published{.messages = p.published, .bytes = p.published_bytes};
      const auto before = publishers_.find(p.publisher_id);
      if (dt_s <= 0 || before == publishers_.end()) {
        continue;  // a new publisher: its rate from the next look on
      }
      const double m = per_s(p.published, before->second.messages, dt_s);
      const double b = per_s(p.published_bytes, before->second.bytes, dt_s);
      if (m >= 0 && b >= 0) {
        messages += m;
        bytes += b;
        measured = true;
      }
    }
    if (measured) {
      r.rate_hz = messages;
      r.bytes_per_s = bytes;
    }

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
  publishers_ = std::move(publishers_now);
  queues_ = sample_queues(queues.connections, now_ns);
  last_ns_ = now_ns;
  return round;
}

}  // namespace axon::tools
