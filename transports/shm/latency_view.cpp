// read_live_stats() and read_topic_latency(): the public view of the nodes'
// statistics segments (endpoint_stats_reader.hpp), for the axon command.
#include <algorithm>

#include "axon/domain_view.hpp"
#include "src/base/clock.hpp"
#include "transports/shm/domain_files.hpp"
#include "transports/shm/endpoint_stats_reader.hpp"

namespace axon {

Result<LiveStatsView> read_live_stats(const DomainAddress& address) {
  const shm::DomainFiles files(address);
  auto stats = shm::read_domain_stats(files.address.domain_id, files.address.shm_dir);
  if (!stats) {
    return stats.error();
  }
  LiveStatsView out{.publishers = {}, .subscribers = {}, .networks = {}, .problems = std::move(stats->problems)};
  const std::int64_t now_ns = monotonic_now_ns();
  for (const shm::ParticipantStatsSnapshot& p : stats->participants) {
    if (p.network_at_ns != 0) {
      out.networks.push_back(NodeNetworkView{.node = p.node_name,
                                             .pid = p.pid,
                                             .participant_slot = p.participant_slot,
                                             .participant_generation = p.participant_generation,
                                             .age_ns = std::max<std::int64_t>(now_ns - p.network_at_ns, 0),
                                             .counters = p.network});
    }
    for (const shm::EndpointStatsSnapshot& e : p.endpoints) {
      if (e.kind == shm::StatsEndpointKind::kPublisher) {
        out.publishers.push_back(PublisherTrafficView{.publisher_id = e.endpoint_id,
                                                      .topic = e.topic,
                                                      .node = p.node_name,
                                                      .pid = p.pid,
                                                      .published = e.publisher.published,
                                                      .published_bytes = e.published_bytes});
        continue;
      }
      out.subscribers.push_back(SubscriberLatencyView{.subscriber_id = e.endpoint_id,
                                                      .topic = e.topic,
                                                      .node = p.node_name,
                                                      .pid = p.pid,
                                                      .taken = e.subscriber.taken,
                                                      .count = e.latency.count,
                                                      .p50_ns = e.latency.p50_ns,
                                                      .p90_ns = e.latency.p90_ns,
                                                      .p99_ns = e.latency.p99_ns,
                                                      .p999_ns = e.latency.p999_ns,
                                                      .max_ns = e.latency.max_ns,
                                                      .mean_ns = e.latency.mean_ns,
                                                      .seconds = e.latency.windows});
    }
    for (const std::string& skipped : p.skipped) {
      out.problems.push_back(p.path + ": " + skipped);
    }
  }
  return out;
}

Result<std::vector<SubscriberLatencyView>> read_topic_latency(const DomainAddress& address, const std::string& topic,
                                                              std::vector<std::string>& problems) {
  auto stats = read_live_stats(address);
  if (!stats) {
    return stats.error();
  }
  problems = std::move(stats->problems);
  std::vector<SubscriberLatencyView> out;
  for (SubscriberLatencyView& s : stats->subscribers) {
    if (s.topic == topic) {
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace axon
