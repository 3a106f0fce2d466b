// What a replay did, for the summary `axon play` prints at the end (text, or one --json document).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "src/tools/axon/play/timing_stats.hpp"

namespace axon::tools {

/// One published topic.
struct TopicReplay {
  std::string topic;           ///< As published (after --remap).
  std::string recorded_topic;  ///< As recorded.
  std::string type;
  std::string serializer;
  std::uint64_t published = 0;
  std::uint64_t delivered = 0;          ///< Deliveries to subscribers, summed over the messages.
  std::uint64_t skipped_too_large = 0;  ///< Larger than the pool's largest chunk class (or a size the type refuses).
  std::uint64_t skipped_no_chunk = 0;   ///< No free chunk within a second (back-pressure).
};

/// A channel of a file that is not replayed, and why.
struct SkippedChannel {
  std::string file;
  std::string topic;
  std::string reason;
};

struct PlayReport {
  std::vector<std::string> files;
  std::optional<double> rate;  ///< std::nullopt: max.
  bool spin = false;           ///< Waited by spinning throughout (--spin), not sleeping then spinning.
  std::vector<TopicReplay> topics;
  std::vector<SkippedChannel> skipped_channels;
  std::vector<std::string> problems;  ///< Said once each: a message too large for a topic, a corrupt chunk.
  std::uint64_t loops = 0;            ///< Passes over the files completed.
  bool interrupted = false;           ///< Ctrl-C (or SIGTERM) ended it.
  std::string error;                  ///< Why play did not replay (a file unreadable, ...); empty when it did.
  double wall_s = 0;
  std::string pool;  ///< The publishing node's chunk classes (describe_pool()).
  /// Timed replays: the error of each message's publish time against its deadline, the clock's first base
  /// (CLOCK_MONOTONIC ns) and the log time due then.
  TimingSummary timing;
  std::int64_t start_ns = 0;
  /// Messages copied into their chunks while play waited for an earlier one's deadline (a burst's).
  std::uint64_t prepared_ahead = 0;
  std::uint64_t first_log_time_ns = 0;
};

void print_play_text(const PlayReport& report, std::FILE* out);
void print_play_json(const PlayReport& report, std::FILE* out);

}  // namespace axon::tools
