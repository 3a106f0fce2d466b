// What `axon monitor` shows of each topic in one look, and how it gets there: the registry's view, the queues in
// the publishers' pools and the nodes' live statistics, with the counts of the previous look turned into rates.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "axon/domain_view.hpp"
#include "src/tools/axon/graph/publish_rates.hpp"
#include "src/tools/axon/graph/queue_rates.hpp"

namespace axon::tools {

/// One topic in one look. A figure that is not known (yet) is negative, never a made-up zero.
struct TopicRound {
  std::string name;
  std::size_t publishers = 0;
  std::size_t subscribers = 0;
  double rate_hz = -1;          ///< Messages the topic's publishers on this host published per second.
  double bytes_per_s = -1;      ///< Their payload bytes per second.
  double delivered_per_s = -1;  ///< Queued for the subscribers on this host, summed over them.
  double dropped_per_s = -1;    ///< Not queued for them (full queue, evicted, timed out), summed.
  std::uint64_t queued = 0;     ///< Waiting in their queues now.
  /// Publish-to-take latency over the statistics' window (about 10 s): the largest p50 and the largest p99 of the
  /// topic's subscribers that measured a take in it.
  std::int64_t p50_ns = -1;
  std::int64_t p99_ns = -1;
  /// The fullest queue (publisher -> subscriber) by fill over depth; depth 0: no queue.
  std::uint32_t fullest_queued = 0;
  std::uint32_t fullest_depth = 0;
};

struct Round {
  double at_s = 0;  ///< Since the monitor started.
  std::vector<TopicRound> topics;
  std::vector<std::string> notes;  ///< What could not be read, each in one line.
};

enum class MonitorSort : std::uint8_t { kName, kRate, kBandwidth, kP99, kDrops, kQueued };

/// The --sort words: "name", "rate", "bandwidth", "p99", "drops", "queued".
[[nodiscard]] const std::vector<std::string>& sort_words();
[[nodiscard]] std::optional<MonitorSort> parse_sort(const std::string& word);
[[nodiscard]] const char* sort_word(MonitorSort sort) noexcept;

/// Orders `topics` by name (A..Z) or by the figure, largest first (like top); unknown figures last, ties by name.
void sort_topics(std::vector<TopicRound>& topics, MonitorSort sort);

/// The counters of the previous look, to turn the next look's counts into rates. Not thread-safe; allocates.
class MonitorCounters {
 public:
  /// One look at `now_ns` (CLOCK_MONOTONIC; the monitor started at `start_ns`): every topic of `view` with what
  /// `queues` (read_topic_connections() of every topic) and `stats` (read_live_stats()) say of it. Rates are
  /// known from the second look on, for the publishers and queues the previous look saw too.
  Round look(const DomainView& view, const TopicConnections& queues, const LiveStatsView& stats, std::int64_t now_ns,
             std::int64_t start_ns);

 private:
  PublishSample published_;  ///< The publishers' counts at the last look (publish_rates.hpp).
  QueueSample queues_;       ///< The queues' counts at the last look (queue_rates.hpp).
};

}  // namespace axon::tools
