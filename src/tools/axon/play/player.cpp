#include "src/tools/axon/play/player.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>
#include <thread>

#include "src/tools/axon/play/merged_messages.hpp"
#include "src/tools/axon/play/replay_channels.hpp"
#include "src/tools/axon/topic/watch.hpp"

namespace axon::tools {
namespace {

using namespace std::chrono_literals;

/// How long a publish waits for a free chunk (subscribers holding them all) before it skips the message.
constexpr std::int64_t kChunkWaitNs = 1'000'000'000;
/// Chunks of each file read ahead by a thread of their own, so that the timing thread never waits for a read.
/// Two: one being consumed while the next is ready and another read (a recording's chunk is a few MiB).
constexpr std::size_t kReadAheadChunks = 2;
/// Messages due this soon after the one play waits for are copied into their chunks during that wait: a burst of
/// camera frames (six 2 MiB frames due within 5 ms in the urban recording) is copied before its first frame.
constexpr std::int64_t kPrepareHorizonNs = 20'000'000;
/// Copies this large are timed, for the estimate of how long the next one takes.
constexpr std::size_t kTimedCopyBytes = std::size_t{64} * 1024;
/// Timing samples reserved up front at most (8 bytes each).
constexpr std::uint64_t kMaxReservedSamples = std::uint64_t{4} << 20;

std::uint64_t seconds_to_ns(double seconds) { return seconds <= 0 ? 0 : static_cast<std::uint64_t>(seconds * 1e9); }

void announce(const KeyInput& keys, const char* text) {
  if (keys.active()) {
    std::fprintf(stderr, "axon play: %s\n", text);
  }
}

std::string hex16(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016" PRIx64, value);
  return text;
}

}  // namespace

Result<void> Player::open_files() {
  for (const std::string& path : options_.files) {
    auto reader = mcap::Reader::open(path);
    if (!reader) {
      return Error(reader.error().code(), "cannot read " + path + ": " + std::string(reader.error().message()));
    }
    readers_.push_back(std::move(*reader));
    report_.files.push_back(path);
  }
  channels_.resize(readers_.size());
  return {};
}

std::size_t Player::channel_count() const {
  std::size_t count = 0;
  for (const auto& reader : readers_) {
    count += reader->summary().channels.size();
  }
  return count;
}

std::vector<ReplayDemand> Player::pool_demands() const {
  std::vector<ReplayDemand> demands;
  for (const auto& reader : readers_) {
    const mcap::Summary& summary = reader->summary();
    const mcap::Statistics& statistics = summary.statistics;
    const double seconds = statistics.message_end_time > statistics.message_start_time
                               ? static_cast<double>(statistics.message_end_time - statistics.message_start_time) / 1e9
                               : 0.0;
    for (const mcap::Channel& channel : summary.channels) {
      if (!options_.topics.empty() &&
          std::find(options_.topics.begin(), options_.topics.end(), channel.topic) == options_.topics.end()) {
        continue;
      }
      const mcap::Schema* schema = nullptr;
      for (const mcap::Schema& s : summary.schemas) {
        if (channel.schema_id != 0 && s.id == channel.schema_id) {
          schema = &s;
        }
      }
      const auto type = replay_type_of(channel, schema);
      const auto* replay = std::get_if<ReplayType>(&type);
      if (replay == nullptr) {
        continue;
      }
      std::uint64_t messages = 0;
      for (const auto& [id, count] : statistics.channel_message_counts) {
        messages += id == channel.id ? count : 0;
      }
      demands.push_back(ReplayDemand{.payload_bytes = replay->declared.max_payload_bytes,
                                     .rate_hz = seconds > 0 ? static_cast<double>(messages) / seconds : 0.0});
    }
  }
  return demands;
}

std::string Player::published_name(const std::string& recorded) const {
  for (const auto& [from, to] : options_.remaps) {
    if (from == recorded) {
      return to;
    }
  }
  return recorded;
}

int Player::output_of(Node& node, std::size_t file, std::uint16_t channel_id) {
  if (const auto known = channels_[file].find(channel_id); known != channels_[file].end()) {
    return known->second;
  }
  const auto& channels = readers_[file]->summary().channels;
  const auto channel =
      std::find_if(channels.begin(), channels.end(), [&](const mcap::Channel& c) { return c.id == channel_id; });
  int output = kSkipped;
  if (channel == channels.end()) {
    report_.skipped_channels.push_back(SkippedChannel{
        .file = options_.files[file],
        .topic = "#" + std::to_string(channel_id),
        .reason = "its messages name channel id " + std::to_string(channel_id) + ", which the file does not define"});
  } else {
    output = resolve(node, file, *channel);
  }
  channels_[file][channel_id] = output;
  return output;
}

int Player::resolve(Node& node, std::size_t file, const mcap::Channel& channel) {
  const std::string& recorded = channel.topic;
  if (!options_.topics.empty() &&
      std::find(options_.topics.begin(), options_.topics.end(), recorded) == options_.topics.end()) {
    return kFiltered;
  }
  const auto skip = [&](std::string reason) {
    report_.skipped_channels.push_back(
        SkippedChannel{.file = options_.files[file], .topic = recorded, .reason = std::move(reason)});
    return kSkipped;
  };
  const mcap::Schema* schema = nullptr;
  for (const mcap::Schema& s : readers_[file]->summary().schemas) {
    if (channel.schema_id != 0 && s.id == channel.schema_id) {
      schema = &s;
    }
  }
  auto type = replay_type_of(channel, schema);
  if (const auto* reason = std::get_if<SkipReason>(&type)) {
    return skip(reason->text);
  }
  auto& replay = std::get<ReplayType>(type);
  const std::string name = published_name(recorded);
  if (const auto same = output_by_topic_.find(name); same != output_by_topic_.end()) {
    const Output& existing = outputs_[same->second];
    if (existing.hash == replay.declared.type.hash) {
      return static_cast<int>(same->second);
    }
    return skip("topic '" + name + "' is already replayed from " + existing.from_file + " as type " +
                report_.topics[existing.report_index].type + " (hash " + hex16(existing.hash) +
                "), and this channel's type " + replay.declared.type.name + " has hash " +
                hex16(replay.declared.type.hash));
  }
  AnyPublicationOptions publication_options;
  publication_options.declared = replay.declared;
  if (!replay.recorded_by_axon) {
    // A file of another tool has no axon hash: a topic of the same type name and format already in the domain
    // (its typed endpoints registered it) is joined as its own type.
    auto existing = node.find_topic(name);
    if (existing && existing->type.name == replay.declared.type.name &&
        existing->type.serializer == replay.declared.type.serializer) {
      publication_options.declared.reset();
    }
  }
  auto publication = node.advertise_any(name, publication_options);
  if (!publication) {
    return skip(std::string(publication.error().message()));
  }
  outputs_.push_back(Output{.publisher = std::move(publication->publisher),
                            .hash = replay.declared.type.hash,
                            .max_payload_bytes = replay.declared.max_payload_bytes,
                            .report_index = report_.topics.size(),
                            .from_file = options_.files[file],
                            .told_too_large = false});
  report_.topics.push_back(TopicReplay{.topic = name,
                                       .recorded_topic = recorded,
                                       .type = publication->topic.type.name,
                                       .serializer = publication->topic.type.serializer});
  output_by_topic_[name] = outputs_.size() - 1;
  return static_cast<int>(outputs_.size() - 1);
}

Result<void> Player::run(Node& node, KeyInput& keys) {
  std::uint64_t messages = 0;
  for (std::size_t file = 0; file < readers_.size(); ++file) {
    for (const mcap::Channel& channel : readers_[file]->summary().channels) {
      (void)output_of(node, file, channel.id);
    }
    messages += readers_[file]->summary().statistics.message_count;
  }
  if (outputs_.empty()) {
    return Error(ErrorCode::kNotFound, options_.topics.empty()
                                           ? "no channel of the files can be replayed (the skipped ones say why)"
                                           : "no channel of the files is one --topics names, or can be replayed");
  }
  if (options_.rate) {
    timing_.reserve(std::min(messages, kMaxReservedSamples));
    warm_pool();
  }
  if (!wait_delay()) {
    report_.interrupted = true;
    return {};
  }
  paused_ = options_.paused;
  if (paused_) {
    announce(keys, "paused: space resumes, s (or the right arrow) publishes the next message");
  }
  ReplayClock clock(options_.rate.value_or(1.0), options_.spin ? ReplayWait::kSpin : ReplayWait::kSleepThenSpin);
  const std::int64_t started = monotonic_now_ns();
  for (;;) {
    const bool finished = play_once(node, keys, clock);
    if (!finished) {
      report_.interrupted = true;
      break;
    }
    ++report_.loops;
    if (!options_.loop) {
      break;
    }
  }
  report_.wall_s = static_cast<double>(monotonic_now_ns() - started) / 1e9;
  report_.timing = timing_.summary();
  return {};
}

void Player::warm_pool() {
  constexpr std::size_t kPageBytes = 4096;
  constexpr std::size_t kMaxHeld = 1U << 16;  // far beyond any pool play sizes (replay_pool.cpp)
  // Largest payloads first. A loan takes the smallest class that fits and, that class exhausted, a larger one:
  // taken in the outputs' order, a 1 MiB topic first would hold (and write 1 MiB of) the 2 MiB chunks, and the
  // camera frames would write their second halves for the first time while timed (1.6 ms copies instead of
  // 0.13). Largest first, every chunk is first held by the largest payload that can ever be written into it.
  std::vector<const Output*> largest_first;
  for (const Output& output : outputs_) {
    largest_first.push_back(&output);
  }
  std::stable_sort(largest_first.begin(), largest_first.end(),
                   [](const Output* a, const Output* b) { return a->max_payload_bytes > b->max_payload_bytes; });
  std::vector<Loan<Bytes>> held;
  for (const Output* taking : largest_first) {
    const Output& output = *taking;
    if (output.max_payload_bytes == 0) {
      continue;
    }
    while (held.size() < kMaxHeld) {
      auto loan = output.publisher->loan(output.max_payload_bytes);
      if (!loan) {
        break;  // every chunk of its class is held (exhausted), or it has none that large (said when replayed)
      }
      std::byte* const bytes = (*loan).data();
      for (std::size_t at = 0; at < output.max_payload_bytes; at += kPageBytes) {
        bytes[at] = std::byte{0};
      }
      held.push_back(std::move(*loan));
    }
  }
}  // the loans go back unpublished

bool Player::wait_delay() const {
  const std::int64_t until = monotonic_now_ns() + static_cast<std::int64_t>(options_.delay_s * 1e9);
  for (std::int64_t now = monotonic_now_ns(); now < until; now = monotonic_now_ns()) {
    if (StopOnSignals::requested()) {
      return false;
    }
    // Short sleeps: Ctrl-C ends the wait within 50 ms.
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<std::int64_t>(until - now, 50'000'000)));
  }
  return true;
}

bool Player::wait_paused(KeyInput& keys, ReplayClock& clock, std::uint64_t log_time_ns, bool& stepped) {
  while (paused_) {
    if (StopOnSignals::requested()) {
      return false;
    }
    if (!keys.active()) {
      paused_ = false;  // no keys can come (stdin ended): go on
      break;
    }
    const Key key = keys.poll(50ms);
    if (key == Key::kTogglePause) {
      paused_ = false;
      announce(keys, "resumed");
    } else if (key == Key::kStep) {
      stepped = true;
      return true;
    }
  }
  clock.rebase(monotonic_now_ns(), log_time_ns);
  return true;
}

bool Player::play_once(Node& node, KeyInput& keys, ReplayClock& clock) {
  Pass pass(readers_, kReadAheadChunks);
  pass.merged.wait_read_ahead();  // the first messages do not wait for the first reads
  const bool timed = options_.rate.has_value();
  for (;;) {
    if (StopOnSignals::requested()) {
      return false;
    }
    if (pass.prepared.empty()) {
      if (!read_next(node, pass)) {
        return true;  // the last message was published
      }
      std::optional<Loan<Bytes>> loan;
      const Prepared prepared = prepare(outputs_[static_cast<std::size_t>(pass.next_output)], pass.next.message.data,
                                        ChunkWait::kUpToASecond, loan);
      pass.has_next = false;
      if (prepared != Prepared::kReady) {
        continue;  // skipped and counted (no chunk, too large)
      }
      pass.prepared.push(PreparedMessage{.output = static_cast<std::size_t>(pass.next_output),
                                         .log_time_ns = pass.next.message.header.log_time,
                                         .loan = std::move(*loan)});
    }
    const std::uint64_t log_time = pass.prepared.front().log_time_ns;
    if (!pass.based) {
      clock.rebase(monotonic_now_ns(), log_time);
      pass.based = true;
      if (!first_base_set_) {
        report_.start_ns = clock.base_ns();
        report_.first_log_time_ns = log_time;
        first_base_set_ = true;
      }
    }
    // While this message waits for its deadline: the next one is read (a file's next chunk, a few MiB, CRC
    // checked, then costs the wait, not the next message's lateness) and, spinning, those due soon are copied
    // into chunks. Not when sleeping: reading ahead wakes the read-ahead thread just before the timing thread
    // sleeps, and that thread then keeps the core for a chunk's read past the timer's wake-up (traced; p99 0.5 ..
    // 1.3 ms against 0.3 .. 0.9 without; docs/design/replay.md, "Preparing ahead").
    const bool ahead = timed && !paused_ && options_.spin;
    prepare_ahead(node, pass, clock, ahead ? std::optional(clock.deadline_ns(log_time)) : std::nullopt);
    bool stepped = false;
    bool was_paused = false;
    // A key typed since the last message (while a chunk was read, say) counts here, the step key included.
    const Key key = keys.active() ? keys.poll(0ms) : Key::kNone;
    if (key == Key::kTogglePause) {
      paused_ = !paused_;
      announce(keys, paused_ ? "paused: space resumes, s publishes the next message" : "resumed");
      if (!paused_) {
        clock.rebase(monotonic_now_ns(), log_time);
      }
    }
    if (paused_) {
      was_paused = true;
      if (key == Key::kStep) {
        stepped = true;
      } else if (!wait_paused(keys, clock, log_time, stepped)) {
        return false;
      }
    }
    std::int64_t deadline = 0;
    if (timed && !stepped) {
      deadline = clock.deadline_ns(log_time);
      bool pause_asked = false;
      const auto interrupted = [&] {
        if (StopOnSignals::requested()) {
          return true;
        }
        pause_asked = keys.active() && keys.poll(0ms) == Key::kTogglePause;
        return pause_asked;
      };
      if (!clock.wait_until(deadline, interrupted)) {
        if (!pause_asked) {
          return false;
        }
        paused_ = true;
        was_paused = true;
        announce(keys, "paused: space resumes, s publishes the next message");
        if (!wait_paused(keys, clock, log_time, stepped)) {
          return false;
        }
      }
    }
    PreparedMessage message = pass.prepared.pop();
    // A message published by a step or a resume has no deadline of its own to be measured against.
    publish(outputs_[message.output], std::move(message.loan), deadline, timed && !was_paused);
  }
}

bool Player::read_next(Node& node, Pass& pass) {
  // The next message in log-time order (a corrupt chunk is a problem in the report, and the files go on).
  while (!pass.has_next && !pass.ended) {
    auto more = pass.merged.next(pass.next);
    if (!more) {
      report_.problems.emplace_back(more.error().message());
      continue;
    }
    if (!*more) {
      pass.ended = true;
      break;
    }
    const std::uint64_t log_time = pass.next.message.header.log_time;
    if (!pass.window_set) {  // the recording's first message, over all files and channels
      pass.window_start = log_time + seconds_to_ns(options_.start_offset_s);
      pass.window_end = options_.duration_s > 0 ? pass.window_start + seconds_to_ns(options_.duration_s)
                                                : std::numeric_limits<std::uint64_t>::max();
      pass.window_set = true;
    }
    if (log_time < pass.window_start) {
      continue;
    }
    if (log_time > pass.window_end) {
      pass.ended = true;  // messages come in log-time order: none after this is in the window
      break;
    }
    pass.next_output = output_of(node, pass.next.file, pass.next.message.header.channel_id);
    pass.has_next = pass.next_output >= 0;
  }
  return pass.has_next;
}

void Player::prepare_ahead(Node& node, Pass& pass, const ReplayClock& clock,
                           std::optional<std::int64_t> front_deadline_ns) {
  while (read_next(node, pass)) {
    if (!front_deadline_ns || pass.prepared.full()) {
      return;  // untimed, paused, sleeping between messages (no --spin), or enough held
    }
    const mcap::Bytes payload = pass.next.message.data;
    // Not due soon after the front: its chunk is better left free for now. Or its copy would make the front late.
    if (clock.deadline_ns(pass.next.message.header.log_time) - *front_deadline_ns > kPrepareHorizonNs ||
        monotonic_now_ns() + expected_copy_ns(payload.size()) + ReplayClock::kSpinMarginNs > *front_deadline_ns) {
      return;
    }
    std::optional<Loan<Bytes>> loan;
    const Prepared prepared =
        prepare(outputs_[static_cast<std::size_t>(pass.next_output)], payload, ChunkWait::kNone, loan);
    if (prepared == Prepared::kNoChunkYet) {
      return;  // prepared, waiting for a chunk if need be, when it is the front
    }
    pass.has_next = false;
    if (prepared == Prepared::kReady) {
      pass.prepared.push(PreparedMessage{.output = static_cast<std::size_t>(pass.next_output),
                                         .log_time_ns = pass.next.message.header.log_time,
                                         .loan = std::move(*loan)});
      ++report_.prepared_ahead;
    }
  }
}

Player::Prepared Player::prepare(Output& output, mcap::Bytes payload, ChunkWait wait,
                                 std::optional<Loan<Bytes>>& loan) {
  TopicReplay& counts = report_.topics[output.report_index];
  const auto tell_once = [&](const std::string& why) {
    if (!output.told_too_large) {
      report_.problems.push_back("topic '" + counts.topic + "': a message of " + std::to_string(payload.size()) +
                                 " bytes was skipped: " + why);
      output.told_too_large = true;
    }
  };
  const std::int64_t give_up = monotonic_now_ns() + kChunkWaitNs;
  for (;;) {
    auto loaned = output.publisher->loan(payload.size());
    if (loaned.exhausted()) {
      if (wait == ChunkWait::kNone) {
        return Prepared::kNoChunkYet;
      }
      if (monotonic_now_ns() < give_up && !StopOnSignals::requested()) {
        const timespec pause{.tv_sec = 0, .tv_nsec = 100'000};
        (void)::nanosleep(&pause, nullptr);
        continue;  // subscribers still hold every chunk: they give them back as they take
      }
      ++counts.skipped_no_chunk;
      return Prepared::kSkipped;
    }
    if (loaned.failed()) {
      // The one copy of a replay, below, needs a chunk: a message larger than the pool's largest class (the
      // error names the size, the class and the config key) or of a size its type cannot have is skipped.
      ++counts.skipped_too_large;
      tell_once(std::string(loaned.error().message()));
      return Prepared::kSkipped;
    }
    if (payload.size() >= kTimedCopyBytes) {
      const std::int64_t started = monotonic_now_ns();
      std::memcpy((*loaned).data(), payload.data(), payload.size());
      const double ns_per_byte =
          static_cast<double>(monotonic_now_ns() - started) / static_cast<double>(payload.size());
      copy_ns_per_byte_ = 0.75 * copy_ns_per_byte_ + 0.25 * ns_per_byte;
    } else if (!payload.empty()) {
      std::memcpy((*loaned).data(), payload.data(), payload.size());
    }
    loan.emplace(std::move(*loaned));
    return Prepared::kReady;
  }
}

std::int64_t Player::expected_copy_ns(std::size_t bytes) const {
  return static_cast<std::int64_t>(copy_ns_per_byte_ * static_cast<double>(bytes));
}

void Player::publish(Output& output, Loan<Bytes> loan, std::int64_t deadline_ns, bool timed) {
  TopicReplay& counts = report_.topics[output.report_index];
  const std::size_t bytes = loan.size();
  const std::int64_t at = monotonic_now_ns();
  const PublishResult result = output.publisher->publish(std::move(loan));
  if (result.failed()) {
    ++counts.skipped_too_large;
    if (!output.told_too_large) {
      report_.problems.push_back("topic '" + counts.topic + "': a message of " + std::to_string(bytes) +
                                 " bytes was skipped: " + std::string(result.error().message()));
      output.told_too_large = true;
    }
    return;
  }
  ++counts.published;
  counts.delivered += result->delivered;
  if (timed) {
    timing_.add(at - deadline_ns);
  }
}

}  // namespace axon::tools
