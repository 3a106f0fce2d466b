#include "transports/shm/endpoint_stats_reader.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "src/base/clock.hpp"
#include "src/base/errors.hpp"
#include "transports/shm/process_identity.hpp"
#include "transports/shm/stats_layout.hpp"

namespace axon::shm {
namespace {

/// A read-only mapping of a whole file; unmapped when destroyed.
class ReadOnlyMapping {
 public:
  ReadOnlyMapping(const void* base, std::size_t bytes) noexcept : base_(base), bytes_(bytes) {}
  ReadOnlyMapping(const ReadOnlyMapping&) = delete;
  ReadOnlyMapping& operator=(const ReadOnlyMapping&) = delete;
  ~ReadOnlyMapping() { ::munmap(const_cast<void*>(base_), bytes_); }
  [[nodiscard]] const std::byte* base() const noexcept { return static_cast<const std::byte*>(base_); }

 private:
  const void* base_;
  std::size_t bytes_;
};

/// Why `id` (of an entry of `kind`) cannot be a live endpoint's, or "".
std::string_view invalid_identity(const StatsIdentity& id, StatsEndpointKind kind) noexcept {
  if (id.registry_slot >= std::max(kMaxPublishersLimit, kMaxSubscribersLimit)) {
    return "its registry slot is out of range";
  }
  if (id.topic_slot >= kMaxTopicsLimit) {
    return "its topic index is out of range";
  }
  if (kind == StatsEndpointKind::kSubscriber ? id.depth == 0 || id.depth > kRingCapacity : id.depth != 0) {
    return "its queue depth is out of range";
  }
  if (::strnlen(id.topic, sizeof(id.topic)) == sizeof(id.topic) || id.topic[0] == '\0') {
    return "its topic name is empty or not terminated";
  }
  return {};
}

void fill_identity(EndpointStatsSnapshot& out, const StatsIdentity& id, StatsEndpointKind kind, std::uint32_t slot) {
  out.kind = kind;
  out.topic.assign(id.topic, ::strnlen(id.topic, sizeof(id.topic)));
  out.topic_slot = id.topic_slot;
  out.registry_slot = id.registry_slot;
  out.registry_generation = id.registry_generation;
  out.endpoint_id = (std::uint64_t{id.registry_slot} << 32) | id.registry_generation;
  out.stats_slot = slot;
  out.depth = id.depth;
}

// Relaxed loads of single-writer statistics: each is read on its own; the
// state word around the copy tells whether the entry stayed the same endpoint.
void copy_counters(const PublisherStats& e, EndpointStatsSnapshot& out) noexcept {
  out.publisher.published = e.live.published.load(std::memory_order_relaxed);
  out.publisher.totals.queued = e.live.queued.load(std::memory_order_relaxed);
  out.publisher.totals.dropped_full = e.live.dropped_full.load(std::memory_order_relaxed);
  out.publisher.totals.dropped_oldest = e.live.dropped_oldest.load(std::memory_order_relaxed);
  out.publisher.totals.dropped_timeout = e.live.dropped_timeout.load(std::memory_order_relaxed);
  out.published_bytes = e.live.published_bytes.load(std::memory_order_relaxed);
  out.publisher.totals.quarantined = e.refreshed.quarantined.load(std::memory_order_relaxed);
  out.publisher.totals.high_water = e.refreshed.high_water.load(std::memory_order_relaxed);
  out.publisher.rejected_by_subscribers = e.refreshed.rejected_by_subscribers.load(std::memory_order_relaxed);
  out.subscribers = e.refreshed.subscribers.load(std::memory_order_relaxed);
  out.refreshed_at_ns = e.refreshed.at_ns.load(std::memory_order_relaxed);
}

void copy_counters(const SubscriberStats& e, EndpointStatsSnapshot& out, std::int64_t now_ns) noexcept {
  const std::uint64_t taken = e.live.taken.load(std::memory_order_relaxed);
  out.subscriber.rejected = e.live.rejected.load(std::memory_order_relaxed);
  // As SubscriberCounters::taken: what reached user code.
  out.subscriber.taken = taken >= out.subscriber.rejected ? taken - out.subscriber.rejected : 0;
  out.subscriber.publishers_lost = e.live.publishers_lost.load(std::memory_order_relaxed);
  out.subscriber.queue.queued = e.refreshed.queued.load(std::memory_order_relaxed);
  out.subscriber.queue.dropped_full = e.refreshed.dropped_full.load(std::memory_order_relaxed);
  out.subscriber.queue.dropped_oldest = e.refreshed.dropped_oldest.load(std::memory_order_relaxed);
  out.subscriber.queue.dropped_timeout = e.refreshed.dropped_timeout.load(std::memory_order_relaxed);
  out.subscriber.queue.quarantined = e.refreshed.quarantined.load(std::memory_order_relaxed);
  out.subscriber.queue.high_water = e.refreshed.high_water.load(std::memory_order_relaxed);
  out.fill = e.refreshed.fill.load(std::memory_order_relaxed);
  out.publishers = e.refreshed.publishers.load(std::memory_order_relaxed);
  out.refreshed_at_ns = e.refreshed.at_ns.load(std::memory_order_relaxed);
  out.latency = summarize_latency(e.latency, now_ns);
}

enum class Copied : std::uint8_t { kLive, kFree, kTorn };

/// Copies `e` (slot `slot`) into `out` under its state word (see
/// kStatsLiveBit); an invalid identity goes to `why`.
template <class Entry, class CopyCounters>
Copied copy_entry(const Entry& e, StatsEndpointKind kind, std::uint32_t slot, EndpointStatsSnapshot& out,
                  std::string& why, CopyCounters copy_counters) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    // Acquire pairs with the writer's release store of the live word.
    const std::uint64_t word = e.state.load(std::memory_order_acquire);
    if ((word & kStatsLiveBit) == 0) {
      return Copied::kFree;
    }
    const StatsIdentity id = load_identity(e.identity);
    copy_counters(e, out);
    // Acquire fence: pairs with the writer's release fence in make_live().
    std::atomic_thread_fence(std::memory_order_acquire);
    if (e.state.load(std::memory_order_relaxed) != word) {
      continue;  // freed or reused while copied
    }
    if (const std::string_view invalid = invalid_identity(id, kind); !invalid.empty()) {
      why = fmt::format("{} entry {} is corrupt ({})",
                        kind == StatsEndpointKind::kPublisher ? "publisher" : "subscriber", slot, invalid);
      return Copied::kTorn;
    }
    fill_identity(out, id, kind, slot);
    return Copied::kLive;
  }
  why = fmt::format("{} entry {} was rewritten while read, three times",
                    kind == StatsEndpointKind::kPublisher ? "publisher" : "subscriber", slot);
  return Copied::kTorn;
}

/// Checks the head of a mapped statistics segment of `bytes`; the layout it
/// gives, or why it cannot be used.
Result<StatsLayout> checked_layout(const StatsSegment& head, std::size_t bytes, const std::string& path) {
  // Acquire pairs with the creator's release store of `ready`.
  if (head.header.ready.load(std::memory_order_acquire) != 1) {
    return Error(ErrorCode::kIncompatible,
                 fmt::format("{} is not initialized (its node is starting, or died while starting)", path));
  }
  if (auto ok = check_header(head.header, SegmentKind::kStats, stats_abi_hash(), bytes, path); !ok) {
    return ok.error();
  }
  const std::uint32_t publishers = head.publisher_capacity;
  const std::uint32_t subscribers = head.subscriber_capacity;
  if (publishers == 0 || publishers > kMaxPublishersPerNode || subscribers == 0 || subscribers > kMaxSubscribersLimit) {
    return Error(ErrorCode::kIncompatible,
                 fmt::format("{} is corrupt: its tables have {} publisher and {} subscriber entries (1..{} and 1..{})",
                             path, publishers, subscribers, kMaxPublishersPerNode, kMaxSubscribersLimit));
  }
  const StatsLayout layout = StatsLayout::of(publishers, subscribers);
  if (layout.total_bytes != bytes) {
    return Error(ErrorCode::kIncompatible,
                 fmt::format("{} is corrupt: {} publisher and {} subscriber entries need {} bytes, the file has {}",
                             path, publishers, subscribers, layout.total_bytes, bytes));
  }
  return layout;
}

/// The node's network counters, when its service thread has copied them.
void copy_network(const NetworkStats& from, ParticipantStatsSnapshot& to) noexcept {
  // Acquire pairs with write_network()'s release: the counters stored before that time.
  to.network_at_ns = from.at_ns.load(std::memory_order_acquire);
  if (to.network_at_ns == 0) {
    return;  // no network transport
  }
  for (std::size_t i = 0; i < kNetworkCounterFields.size(); ++i) {
    // Relaxed: statistics (see NetworkStats); any value is a count, never an index.
    to.network.*kNetworkCounterFields[i].member = from.counters[i].load(std::memory_order_relaxed);
  }
}

}  // namespace

Result<ParticipantStatsSnapshot> read_participant_stats(const std::string& path, std::int64_t now_ns) {
  // Read-only, and nothing created: a reader that dies leaves nothing behind.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return system_error(errno, fmt::format("open {}", path));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return system_error(err, fmt::format("fstat of {}", path));
  }
  const auto bytes = static_cast<std::size_t>(st.st_size);
  if (bytes < sizeof(StatsSegment)) {
    ::close(fd);
    return Error(ErrorCode::kIncompatible,
                 fmt::format("{} has {} bytes, too few for a statistics segment: it is not axon's, or its node died "
                             "while creating it",
                             path, bytes));
  }
  void* base = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping stays
  if (base == MAP_FAILED) {
    return system_error(err, fmt::format("mmap of {}", path));
  }
  const ReadOnlyMapping mapping(base, bytes);
  const auto& head = *reinterpret_cast<const StatsSegment*>(mapping.base());
  auto layout = checked_layout(head, bytes, path);
  if (!layout) {
    return layout.error();
  }
  // Acquire pairs with the writer's release after it allocated the entries.
  const std::uint32_t reserved = head.subscribers_reserved.load(std::memory_order_acquire);
  if (reserved > layout->subscribers) {
    return Error(ErrorCode::kIncompatible,
                 fmt::format("{} is corrupt: {} subscriber entries in use of {}", path, reserved, layout->subscribers));
  }
  ParticipantStatsSnapshot out{
      .path = path,
      .domain_id = head.domain_id,
      .participant_slot = head.participant_slot,
      .participant_generation = head.participant_generation,
      .pid = head.pid,
      .start_time = head.start_time,
      .node_name = std::string(head.node_name, ::strnlen(head.node_name, sizeof(head.node_name))),
      .alive = is_alive({.pid = head.pid, .start_time = head.start_time}),
      .take_clock_counter = head.take_clock_counter == 1,
      .endpoints = {},
      .network_at_ns = 0,
      .network = {},
      .skipped = {}};
  copy_network(*reinterpret_cast<const NetworkStats*>(mapping.base() + layout->network_offset), out);
  const auto* pubs = reinterpret_cast<const PublisherStats*>(mapping.base() + layout->publishers_offset);
  const auto* subs = reinterpret_cast<const SubscriberStats*>(mapping.base() + layout->subscribers_offset);
  std::string why;
  for (std::uint32_t b = 0; b < layout->publishers; ++b) {
    EndpointStatsSnapshot one;
    const Copied copied = copy_entry(pubs[b], StatsEndpointKind::kPublisher, b, one, why,
                                     [](const PublisherStats& e, EndpointStatsSnapshot& o) { copy_counters(e, o); });
    if (copied == Copied::kLive) {
      out.endpoints.push_back(std::move(one));
    } else if (copied == Copied::kTorn) {
      out.skipped.push_back(why);
    }
  }
  // Only the entries with memory: the rest of the file is a hole.
  for (std::uint32_t s = 0; s < reserved; ++s) {
    EndpointStatsSnapshot one;
    const Copied copied =
        copy_entry(subs[s], StatsEndpointKind::kSubscriber, s, one, why,
                   [now_ns](const SubscriberStats& e, EndpointStatsSnapshot& o) { copy_counters(e, o, now_ns); });
    if (copied == Copied::kLive) {
      out.endpoints.push_back(std::move(one));
    } else if (copied == Copied::kTorn) {
      out.skipped.push_back(why);
    }
  }
  return out;
}

Result<DomainStatsSnapshot> read_domain_stats(std::uint32_t domain_id, const std::string& shm_dir) {
  DIR* dir = ::opendir(shm_dir.c_str());
  if (dir == nullptr) {
    return system_error(errno,
                        fmt::format("listing {} (the shared-memory directory: AXON_SHM_DIR or /dev/shm)", shm_dir));
  }
  std::vector<std::string> paths;
  const std::string prefix = fmt::format("axon_d{}_p", domain_id);
  while (const dirent* entry = ::readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): own DIR stream
    const std::string_view name = entry->d_name;
    if (name.starts_with(prefix) && name.ends_with(".stats")) {
      paths.push_back(fmt::format("{}/{}", shm_dir, name));
    }
  }
  ::closedir(dir);
  std::sort(paths.begin(), paths.end());
  DomainStatsSnapshot out;
  for (const std::string& path : paths) {
    auto one = read_participant_stats(path, monotonic_now_ns());
    if (!one) {
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
        continue;  // its node left since we listed the directory
      }
      out.problems.emplace_back(one.error().message());
      continue;
    }
    if (!one->alive) {
      out.problems.push_back(
          fmt::format("{}: its process {} is gone (the next node of domain {} to run a liveness "
                      "round removes the file)",
                      path, one->pid, domain_id));
      continue;
    }
    out.participants.push_back(std::move(*one));
  }
  std::sort(out.participants.begin(), out.participants.end(),
            [](const ParticipantStatsSnapshot& a, const ParticipantStatsSnapshot& b) {
              return a.participant_slot < b.participant_slot;
            });
  return out;
}

}  // namespace axon::shm
