// The recording loop of `axon record`: joins the domain, subscribes (Node::subscribe_any, zero copy) to every
// selected topic that has a publisher, including topics that appear later (the domain's registry is read every
// kGraphPoll), and hands each message from its shared-memory chunk to the MCAP writer. Uncompressed, the writer
// points at the payloads until it writes their chunk: the samples stay held in a ring as large as the writer's
// chunk_messages (HeldSamples), so memory and the chunks held from publishers are bounded and nothing is copied.
//
// Thread safety: one thread. Allocates when a topic is added and when a file opens, not per message.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "axon/result.hpp"
#include "src/tools/axon/global_options.hpp"
#include "src/tools/axon/record/topic_selection.hpp"
#include "src/tools/mcap/compression.hpp"

namespace axon::tools {

struct RecordOptions {
  std::string output;
  mcap::Compression compression = mcap::Compression::kNone;
  double duration_s = 0;          ///< > 0: stop after this long.
  std::uint64_t max_bytes = 0;    ///< > 0: stop once the files hold this many bytes.
  std::uint64_t split_bytes = 0;  ///< > 0: a new file every this many bytes.
  double split_duration_s = 0;    ///< > 0: a new file every this many seconds.
  bool reliable = false;          ///< Reliable subscriptions: publishers wait for the recorder.
  double block_timeout_s = 0.1;   ///< With `reliable`: how long a publisher waits for room, at most.
  std::uint32_t depth = 256;      ///< Each subscription's queue (1..256).
};

/// Chunks written uncompressed hold at most this many messages: the samples the recorder holds at once.
inline constexpr std::size_t kHeldMessages = 64;
/// How often the domain's registry is read for new topics.
inline constexpr auto kGraphPoll = std::chrono::milliseconds(150);
/// A chunk is written at least this often, so a killed recorder loses at most about this much and slow topics
/// do not hold their publishers' chunks.
inline constexpr auto kFlushInterval = std::chrono::seconds(1);

/// One topic's figures.
struct TopicRecordStats {
  std::string topic;
  std::string type_name;
  std::string serializer;
  std::uint64_t messages = 0;
  std::uint64_t payload_bytes = 0;
  /// Messages the subscription's queue dropped (evicted as oldest, refused when full, or a reliable publisher
  /// that gave up waiting), from its counters.
  std::uint64_t lost = 0;
  std::uint64_t rejected = 0;  ///< Taken but refused by the subscriber's checks.
};

/// The recording's figures, at any moment and at the end.
struct RecordStats {
  std::vector<TopicRecordStats> topics;
  std::vector<std::string> files;
  std::uint64_t messages = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t file_bytes = 0;
  std::uint64_t lost = 0;
  double seconds = 0;
  std::string stopped_by;  ///< "signal", "duration", "max-bytes".
  std::string qos;         ///< The subscriptions' QoS in short.
};

/// The subscription QoS `options` ask for, in short ("depth 256, drop_oldest, best_effort").
[[nodiscard]] std::string record_qos_text(const RecordOptions& options);

/// Records until a signal (StopOnSignals), --duration or --max-bytes; `progress` (when set) gets the figures
/// about once a second. The files are closed with their summaries. An error (the disk full, a file that cannot
/// be created) ends the recording; the file then reads up to its last complete chunk.
[[nodiscard]] Result<RecordStats> record(const GlobalOptions& globals, const TopicSelection& selection,
                                         const RecordOptions& options,
                                         const std::function<void(const RecordStats&)>& progress);

}  // namespace axon::tools
