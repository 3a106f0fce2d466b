#include "transports/shm/endpoint_stats.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "src/base/errors.hpp"
#include "transports/shm/take_clock.hpp"

namespace axon::shm {
namespace {

/// Claims `entry` for a new endpoint: see kStatsLiveBit for the protocol.
/// `reset` zeroes the counters between the two stores of the state word.
template <class Entry, class Reset>
void make_live(Entry& entry, const StatsIdentity& identity, Reset reset) noexcept {
  // Relaxed: this process is the only writer of the word.
  const std::uint64_t generation = (entry.state.load(std::memory_order_relaxed) >> 1) + 1;
  entry.state.store(generation << 1, std::memory_order_relaxed);
  // Release fence: a reader that copies any store below sees the word move
  // when it loads it again (and drops its copy).
  std::atomic_thread_fence(std::memory_order_release);
  store_identity(entry.identity, identity);
  reset();
  // Release pairs with the reader's acquire load of the state word.
  entry.state.store((generation << 1) | kStatsLiveBit, std::memory_order_release);
}

template <class Entry>
void make_free(Entry& entry) noexcept {
  const std::uint64_t word = entry.state.load(std::memory_order_relaxed);  // our own word
  // Release: readers that see the entry free never mistake a later reuse for it.
  entry.state.store(word & ~kStatsLiveBit, std::memory_order_release);
}

// Relaxed: only inside make_live()'s two stores of the state word, which order them for readers.
void zero(std::atomic<std::uint64_t>& a) noexcept { a.store(0, std::memory_order_relaxed); }
void zero(std::atomic<std::int64_t>& a) noexcept { a.store(0, std::memory_order_relaxed); }
void zero(std::atomic<std::uint32_t>& a) noexcept { a.store(0, std::memory_order_relaxed); }

}  // namespace

StatsIdentity stats_identity(std::uint32_t registry_slot, std::uint32_t registry_generation, std::uint32_t topic_slot,
                             std::string_view topic, std::uint32_t depth) noexcept {
  StatsIdentity id{.registry_slot = registry_slot,
                   .registry_generation = registry_generation,
                   .topic_slot = topic_slot,
                   .depth = depth,
                   .topic = {}};
  std::memcpy(id.topic, topic.data(), std::min(topic.size(), sizeof(id.topic) - 1));
  return id;
}

std::string stats_path(const std::string& shm_dir, std::uint32_t domain_id, std::uint32_t slot,
                       std::uint32_t generation) {
  return fmt::format("{}/axon_d{}_p{}_g{}.stats", shm_dir, domain_id, slot, generation);
}

Result<std::unique_ptr<EndpointStats>> EndpointStats::create(const std::string& path, const StatsOwner& owner,
                                                             std::uint32_t publishers, std::uint32_t subscribers,
                                                             mode_t mode, const std::string& group) {
  const StatsLayout layout = StatsLayout::of(publishers, subscribers);
  const std::string dir = path.substr(0, path.rfind('/'));
  // The head and the publisher entries now; each subscriber entry when used.
  if (auto space = check_free_space(dir, layout.subscribers_offset); !space) {
    return space.error();
  }
  ::unlink(path.c_str());  // a dead predecessor's with our slot and generation
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return system_error(errno, fmt::format("create the statistics segment {}", path));
  }
  auto fail = [&](Error error) -> Result<std::unique_ptr<EndpointStats>> {
    ::close(fd);
    ::unlink(path.c_str());
    return error;
  };
  if (auto perms = apply_permissions(fd, mode, group, path); !perms) {
    return fail(perms.error());
  }
  // The whole size, but only the head and the publishers allocated: the
  // subscriber tables stay a hole until reserve_subscriber() allocates them.
  if (::ftruncate(fd, static_cast<off_t>(layout.total_bytes)) != 0) {
    return fail(system_error(errno, fmt::format("ftruncate of {}", path)));
  }
  if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(layout.subscribers_offset)); err != 0) {
    return fail(Error(ErrorCode::kNoSpace, fmt::format("cannot allocate {} bytes for {} ({}): give the container a "
                                                       "larger --shm-size or free space in {}",
                                                       layout.subscribers_offset, path, errno_text(err), dir)));
  }
  void* base = ::mmap(nullptr, layout.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    return fail(system_error(errno, fmt::format("mmap of {}", path)));
  }
  MappedSegment mapping(fd, static_cast<std::byte*>(base), layout.total_bytes);
  auto* head = new (base) StatsSegment();
  init_header(head->header, SegmentKind::kStats, stats_abi_hash(), layout.total_bytes);
  head->domain_id = owner.domain_id;
  head->participant_slot = owner.participant_slot;
  head->participant_generation = owner.participant_generation;
  head->pid = owner.process.pid;
  head->start_time = owner.process.start_time;
  head->publisher_capacity = publishers;
  head->subscriber_capacity = subscribers;
  head->take_clock_counter = TakeClock::counter_usable() ? 1 : 0;
  std::memcpy(head->node_name, owner.node_name.data(), std::min(owner.node_name.size(), sizeof(head->node_name) - 1));
  new (mapping.base() + layout.network_offset) NetworkStats();
  auto* pubs = reinterpret_cast<PublisherStats*>(mapping.base() + layout.publishers_offset);
  for (std::uint32_t b = 0; b < publishers; ++b) {
    new (&pubs[b]) PublisherStats();
  }
  // Release pairs with the reader's acquire load of `ready` (check first).
  head->header.ready.store(1, std::memory_order_release);
  return std::unique_ptr<EndpointStats>(new EndpointStats(path, std::move(mapping), layout));
}

EndpointStats::EndpointStats(std::string path, MappedSegment mapping, const StatsLayout& layout) noexcept
    : path_(std::move(path)),
      mapping_(std::move(mapping)),
      layout_(layout),
      head_(reinterpret_cast<StatsSegment*>(mapping_.base())),
      network_(reinterpret_cast<NetworkStats*>(mapping_.base() + layout.network_offset)),
      publishers_(reinterpret_cast<PublisherStats*>(mapping_.base() + layout.publishers_offset)),
      subscribers_(reinterpret_cast<SubscriberStats*>(mapping_.base() + layout.subscribers_offset)),
      subscriber_used_(layout.subscribers, false) {}

EndpointStats::~EndpointStats() { remove(); }

void EndpointStats::remove() noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!removed_) {
    ::unlink(path_.c_str());
    removed_ = true;
  }
}

PublisherStats& EndpointStats::open_publisher(std::uint32_t block, const StatsIdentity& identity) noexcept {
  PublisherStats& entry = publishers_[block];
  make_live(entry, identity, [&] {
    zero(entry.live.published);
    zero(entry.live.queued);
    zero(entry.live.dropped_full);
    zero(entry.live.dropped_oldest);
    zero(entry.live.dropped_timeout);
    zero(entry.live.published_bytes);
    zero(entry.refreshed.quarantined);
    zero(entry.refreshed.rejected_by_subscribers);
    zero(entry.refreshed.at_ns);
    zero(entry.refreshed.high_water);
    zero(entry.refreshed.subscribers);
  });
  return entry;
}

void EndpointStats::close_publisher(std::uint32_t block) noexcept { make_free(publishers_[block]); }

Result<std::uint32_t> EndpointStats::reserve_subscriber() {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto free = std::find(subscriber_used_.begin(), subscriber_used_.end(), false);
  if (free == subscriber_used_.end()) {
    // The registry refuses a subscriber past the domain's limit first: this
    // table has as many entries.
    return Error(ErrorCode::kLimitReached,
                 fmt::format("the statistics segment {} has no free subscriber entry (it has {}, the domain's "
                             "limits.subscribers)",
                             path_, layout_.subscribers));
  }
  const auto slot = static_cast<std::uint32_t>(free - subscriber_used_.begin());
  if (slot >= subscribers_allocated_) {
    // Entries up to this one get their memory now, so that neither this
    // process nor a reader ever touches a hole (which would allocate, and
    // raise SIGBUS when the file system is full).
    const std::size_t from = layout_.bytes_with_subscribers(subscribers_allocated_);
    const std::size_t to = layout_.bytes_with_subscribers(slot + 1);
    if (const int err = ::posix_fallocate(mapping_.fd(), static_cast<off_t>(from), static_cast<off_t>(to - from));
        err != 0) {
      return Error(ErrorCode::kNoSpace,
                   fmt::format("cannot allocate the statistics of one more subscriber ({} bytes in {}: {}); give "
                               "the container a larger --shm-size or free space there",
                               to - from, path_, errno_text(err)));
    }
    for (std::uint32_t s = subscribers_allocated_; s <= slot; ++s) {
      new (&subscribers_[s]) SubscriberStats();
    }
    subscribers_allocated_ = slot + 1;
    // Release pairs with the reader's acquire: the entries below it exist.
    head_->subscribers_reserved.store(subscribers_allocated_, std::memory_order_release);
  }
  subscriber_used_[slot] = true;
  return slot;
}

SubscriberStats& EndpointStats::open_subscriber(std::uint32_t slot, const StatsIdentity& identity) noexcept {
  SubscriberStats& entry = subscribers_[slot];
  make_live(entry, identity, [&] {
    zero(entry.live.taken);
    zero(entry.live.rejected);
    zero(entry.live.publishers_lost);
    zero(entry.refreshed.queued);
    zero(entry.refreshed.dropped_full);
    zero(entry.refreshed.dropped_oldest);
    zero(entry.refreshed.dropped_timeout);
    zero(entry.refreshed.quarantined);
    zero(entry.refreshed.at_ns);
    zero(entry.refreshed.high_water);
    zero(entry.refreshed.fill);
    zero(entry.refreshed.publishers);
    // The last endpoint's seconds must not count for this one: cleared here,
    // and the recorder resets each window it rotates into.
    for (LatencyWindow& w : entry.latency.windows) {
      zero(w.second);
    }
  });
  return entry;
}

void EndpointStats::close_subscriber(std::uint32_t slot) noexcept {
  make_free(subscribers_[slot]);
  const std::lock_guard<std::mutex> lock(mutex_);
  subscriber_used_[slot] = false;
}

void EndpointStats::write_network(const NetworkCounters& counters, std::int64_t now_ns) noexcept {
  for (std::size_t i = 0; i < kNetworkCounterFields.size(); ++i) {
    // Relaxed: statistics, ordered for readers by the release store of at_ns below.
    network_->counters[i].store(counters.*kNetworkCounterFields[i].member, std::memory_order_relaxed);
  }
  // Release pairs with the reader's acquire load: a reader that sees this
  // time sees the counters stored before it (or later ones).
  network_->at_ns.store(now_ns, std::memory_order_release);
}

void EndpointStats::add_source(StatsSource* source) {
  const std::lock_guard<std::mutex> lock(mutex_);
  sources_.push_back(source);
}

void EndpointStats::remove_source(StatsSource* source) noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::erase(sources_, source);
}

void EndpointStats::refresh() noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (StatsSource* source : sources_) {
    source->refresh_stats();
  }
}

bool EndpointStats::has_sources() const noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  return !sources_.empty();
}

}  // namespace axon::shm
