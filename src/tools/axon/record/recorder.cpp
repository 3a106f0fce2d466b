// The recording loop (recorder.hpp).
#include "src/tools/axon/record/recorder.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "axon/domain_view.hpp"
#include "axon/node.hpp"
#include "axon/wait_set.hpp"
#include "src/tools/axon/record/channel_mapping.hpp"
#include "src/tools/axon/record/held_samples.hpp"
#include "src/tools/axon/record/recording_files.hpp"
#include "src/tools/axon/topic/watch.hpp"

namespace axon::tools {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// A topic being recorded.
struct Recorded {
  std::shared_ptr<Subscriber<Bytes>> subscriber;
  TopicRecordStats stats;
};

class Recorder {
 public:
  Recorder(const GlobalOptions& globals, const TopicSelection& selection, const RecordOptions& options,
           std::shared_ptr<Node> node)
      : globals_(globals),
        selection_(selection),
        options_(options),
        node_(std::move(node)),
        qos_text_(record_qos_text(options)),
        files_(files_options(options)),
        held_(kHeldMessages) {}

  Result<RecordStats> run(const std::function<void(const RecordStats&)>& progress) {
    // publish_time: the chunk's CLOCK_MONOTONIC stamp moved to the Unix epoch by one offset taken now, so that
    // publish times and log times (CLOCK_REALTIME) compare and a clock step during the recording moves neither.
    epoch_offset_ns_ = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
    if (auto r = files_.open(); !r) {
      return r.error();
    }
    const auto start = Clock::now();
    const auto end =
        options_.duration_s > 0
            ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.duration_s))
            : Clock::time_point::max();
    auto next_poll = start;
    auto next_flush = start + kFlushInterval;
    auto next_progress = start + std::chrono::seconds(1);
    std::string stopped_by = "signal";
    while (!StopOnSignals::requested()) {
      auto now = Clock::now();
      if (now >= next_poll) {
        poll_graph();
        next_poll = now + kGraphPoll;
      }
      auto took = take_all();
      if (!took) {
        return took.error();
      }
      now = Clock::now();
      if (now >= next_flush) {
        if (auto r = release(files_.flush()); !r) {
          return r.error();
        }
        next_flush = now + kFlushInterval;
      }
      if (auto r = release(files_.split_if_due(now)); !r) {
        return r.error();
      }
      if (options_.max_bytes > 0 && files_.bytes_written() >= options_.max_bytes) {
        stopped_by = "max-bytes";
        break;
      }
      if (now >= end) {
        stopped_by = "duration";
        break;
      }
      if (now >= next_progress) {  // also without a progress line: the wait below must not aim at the past
        if (progress) {
          progress(stats(now - start));
        }
        next_progress = now + std::chrono::seconds(1);
      }
      if (*took == 0) {
        wait_for_data(std::min({end, next_poll, next_flush, next_progress}) - now);
      }
    }
    if (auto r = release(files_.close()); !r) {
      return r.error();
    }
    RecordStats result = stats(Clock::now() - start);
    result.stopped_by = stopped_by;
    return result;
  }

 private:
  static RecordingFilesOptions files_options(const RecordOptions& options) {
    RecordingFilesOptions out;
    out.path = options.output;
    out.writer.compression = options.compression;
    out.writer.chunk_messages = kHeldMessages;
    out.split_bytes = options.split_bytes;
    out.split_duration =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(options.split_duration_s));
    return out;
  }

  [[nodiscard]] SubscriberQos qos() const {
    SubscriberQos qos{.history = History::kKeepLast, .depth = options_.depth, .overflow = Overflow::kDropOldest};
    if (options_.reliable) {
      qos.history = History::kKeepAll;
      qos.reliability = Reliability::kReliable;
      qos.overflow = Overflow::kDefault;  // reliable: the publisher waits for room (block_timeout_ns)
      qos.block_timeout_ns = static_cast<std::int64_t>(options_.block_timeout_s * 1e9);
    }
    // The writer holds up to kHeldMessages payloads, all of one topic at worst.
    qos.max_held_samples = static_cast<std::uint32_t>(kHeldMessages);
    qos.verification = Verification::kNever;  // the bytes are recorded, not read
    return qos;
  }

  /// Reads the domain's registry and subscribes to the selected topics that have a publisher and are not
  /// recorded yet. A topic that cannot be subscribed to is tried again at the next poll (said once).
  void poll_graph() {
    auto view = read_domain_view(DomainAddress{.domain_id = globals_.domain_id, .shm_dir = {}});
    if (!view || !view->exists) {
      return;
    }
    for (const TopicView& topic : view->topics) {
      if (!selection_.matches(topic.name) || recorded(topic.name)) {
        continue;
      }
      std::vector<std::string> nodes;
      for (const EndpointView& publisher : view->publishers) {
        const ParticipantView* node = view->participant(publisher.participant_slot);
        if (publisher.topic_slot == topic.slot && node != nullptr &&
            std::find(nodes.begin(), nodes.end(), node->name) == nodes.end()) {
          nodes.push_back(node->name);
        }
      }
      if (nodes.empty()) {
        continue;  // only subscribers so far: its type may not be settled, and there is nothing to record
      }
      subscribe(topic.name, nodes);
    }
  }

  [[nodiscard]] bool recorded(const std::string& name) const {
    return std::any_of(topics_.begin(), topics_.end(), [&](const Recorded& r) { return r.stats.topic == name; });
  }

  void subscribe(const std::string& name, const std::vector<std::string>& nodes) {
    auto subscription = node_->subscribe_any(name, AnySubscriptionOptions{.wait_for_publisher = {}, .qos = qos()});
    if (!subscription) {
      if (std::find(warned_.begin(), warned_.end(), name) == warned_.end()) {
        std::fprintf(stderr, "axon record: cannot record topic '%s' yet (%s); trying again\n", name.c_str(),
                     std::string(subscription.error().message()).c_str());
        warned_.push_back(name);
      }
      return;
    }
    const TopicRecord& record = subscription->topic;
    if (auto r = files_.add_topic(channel_definition(record, nodes, qos_text_)); !r) {
      failure_ = r.error();
      return;
    }
    Recorded recorded{.subscriber = subscription->subscriber,
                      .stats = {.topic = name, .type_name = record.type.name, .serializer = record.type.serializer}};
    can_wait_ = can_wait_ && waits_.attach(recorded.subscriber).ok();
    topics_.push_back(std::move(recorded));
  }

  /// Takes what every subscription has queued (at most a queue's worth each per turn, so one busy topic does
  /// not starve the clock); returns how many messages it recorded.
  Result<std::uint64_t> take_all() {
    if (failure_) {
      return *failure_;
    }
    std::uint64_t taken = 0;
    for (std::size_t i = 0; i < topics_.size(); ++i) {
      Recorded& topic = topics_[i];
      for (std::uint32_t n = 0; n < options_.depth; ++n) {
        auto sample = topic.subscriber->take();
        if (!sample) {
          break;  // nothing queued, or a message the subscriber refused (counted in its counters)
        }
        Sample<Bytes>& taken_sample = *sample;
        const SampleInfo& info = taken_sample.info();
        const mcap::MessageHeader header{
            .channel_id = 0,  // set by the files
            .sequence = static_cast<std::uint32_t>(info.sequence),
            .log_time = static_cast<std::uint64_t>(clock_ns(CLOCK_REALTIME)),
            .publish_time = static_cast<std::uint64_t>(info.publish_time_ns + epoch_offset_ns_)};
        const mcap::Bytes payload(reinterpret_cast<const std::uint8_t*>(taken_sample.elements().data()),
                                  taken_sample.elements().size());
        held_.push(std::move(taken_sample));
        if (auto r = release(files_.add_message(i, header, payload)); !r) {
          return r.error();
        }
        ++topic.stats.messages;
        topic.stats.payload_bytes += payload.size();
        ++taken;
      }
    }
    return taken;
  }

  /// Drops the samples a writer call released; after an error the writer holds none, so neither do we.
  Result<void> release(Result<std::size_t> released) {
    if (!released) {
      held_.release_all();
      return released.error();
    }
    held_.release_oldest(*released);
    return {};
  }

  void wait_for_data(Clock::duration slice) {
    if (slice <= Clock::duration::zero()) {
      return;
    }
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(slice);
    if (can_wait_ && !topics_.empty()) {
      (void)waits_.wait(ns);
    } else {
      // More topics than a WaitSet takes (or none yet): short sleeps bound the latency instead.
      std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(ns, std::chrono::milliseconds(2)));
    }
  }

  [[nodiscard]] RecordStats stats(Clock::duration elapsed) const {
    RecordStats out;
    out.qos = qos_text_;
    out.files = files_.paths();
    out.file_bytes = files_.bytes_written();
    out.seconds = std::chrono::duration<double>(elapsed).count();
    for (const Recorded& topic : topics_) {
      TopicRecordStats s = topic.stats;
      const SubscriberCounters counters = topic.subscriber->counters();
      s.lost = counters.queue.dropped_oldest + counters.queue.dropped_full + counters.queue.dropped_timeout;
      s.rejected = counters.rejected;
      out.messages += s.messages;
      out.payload_bytes += s.payload_bytes;
      out.lost += s.lost;
      out.topics.push_back(std::move(s));
    }
    return out;
  }

  const GlobalOptions& globals_;
  const TopicSelection& selection_;
  const RecordOptions& options_;
  std::shared_ptr<Node> node_;
  std::string qos_text_;
  RecordingFiles files_;
  HeldSamples held_;  // after files_: dropped first, and the writer never reads a payload after that
  std::vector<Recorded> topics_;
  std::vector<std::string> warned_;
  std::optional<Error> failure_;
  WaitSet waits_;
  bool can_wait_ = true;
  std::int64_t epoch_offset_ns_ = 0;
};

}  // namespace

std::string record_qos_text(const RecordOptions& options) {
  if (options.reliable) {
    return fmt::format("depth {}, keep_all, reliable, block_timeout {:g} s", options.depth, options.block_timeout_s);
  }
  return "depth " + std::to_string(options.depth) + ", drop_oldest, best_effort";
}

Result<RecordStats> record(const GlobalOptions& globals, const TopicSelection& selection, const RecordOptions& options,
                           const std::function<void(const RecordStats&)>& progress) {
  NodeOptions node_options;
  node_options.domain_id = globals.domain_id;
  // It loans nothing: the smallest pool a node can have.
  node_options.chunk_classes = {ChunkClassConfig{.payload_bytes = 256, .count = 1}};
  node_options.pool_publishers = 1;
  auto node = Node::create("axon-record-" + std::to_string(::getpid()), node_options);
  if (!node) {
    return node.error();
  }
  Recorder recorder(globals, selection, options, std::move(*node));
  return recorder.run(progress);
}

}  // namespace axon::tools
