// This participant's statistics segment (stats_layout.hpp) as its writer
// sees it: created when the node joins, one entry per publisher block and
// per subscriber, the endpoints that refresh what lives in the pools once a
// second, and removal when the node closes (docs/design/live-stats.md).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "axon/network_counters.hpp"
#include "axon/result.hpp"
#include "transports/shm/process_identity.hpp"
#include "transports/shm/segment.hpp"
#include "transports/shm/stats_layout.hpp"

namespace axon::shm {

/// An endpoint whose statistics partly live elsewhere (the connections in a
/// pool): the service thread asks it to copy them into its entry.
class StatsSource {
 public:
  /// Copies the refreshed part of the entry. The node's service thread;
  /// must not allocate or wait for the domain lock.
  virtual void refresh_stats() noexcept = 0;

 protected:
  StatsSource() = default;
  ~StatsSource() = default;
  StatsSource(const StatsSource&) = default;
  StatsSource& operator=(const StatsSource&) = default;
};

/// Who owns a statistics segment (written into its head).
struct StatsOwner {
  std::uint32_t domain_id = 0;
  std::uint32_t participant_slot = 0;
  std::uint32_t participant_generation = 0;
  ProcessIdentity process;
  std::string node_name;
};

/// The identity of registry endpoint `registry` (slot, generation) of topic
/// `topic_slot` named `topic` (cut to fit), with queue `depth` (0: a publisher).
StatsIdentity stats_identity(std::uint32_t registry_slot, std::uint32_t registry_generation, std::uint32_t topic_slot,
                             std::string_view topic, std::uint32_t depth) noexcept;

/// The path of participant (slot, generation)'s statistics segment.
std::string stats_path(const std::string& shm_dir, std::uint32_t domain_id, std::uint32_t slot,
                       std::uint32_t generation);

/// Thread safety: any thread. Entries are claimed and freed under a
/// process-local mutex (advertise(), subscribe(), destructors: never the
/// data path); each entry's fields are then written by the threads
/// stats_layout.hpp names. Nothing here reads the segment back as an index.
class EndpointStats {
 public:
  /// Creates the segment (replacing a stale file of the same name: its
  /// participant slot and generation are ours, so the file is a dead
  /// predecessor's) with `publishers` and `subscribers` entries. The
  /// publisher entries are allocated now, subscriber entries on first use.
  static Result<std::unique_ptr<EndpointStats>> create(const std::string& path, const StatsOwner& owner,
                                                       std::uint32_t publishers, std::uint32_t subscribers, mode_t mode,
                                                       const std::string& group);
  ~EndpointStats();
  EndpointStats(const EndpointStats&) = delete;
  EndpointStats& operator=(const EndpointStats&) = delete;

  /// Unlinks the file (the mapping stays until destruction). Idempotent.
  void remove() noexcept;
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// The entry of publisher block `block` (< the publisher capacity), made
  /// live with `identity` and zeroed counters.
  PublisherStats& open_publisher(std::uint32_t block, const StatsIdentity& identity) noexcept;
  void close_publisher(std::uint32_t block) noexcept;

  /// A free subscriber entry with its memory allocated (not live yet), or an
  /// error when the file system cannot allocate it.
  Result<std::uint32_t> reserve_subscriber();
  /// Makes the reserved entry `slot` live with `identity`.
  SubscriberStats& open_subscriber(std::uint32_t slot, const StatsIdentity& identity) noexcept;
  /// Frees a reserved or live entry.
  void close_subscriber(std::uint32_t slot) noexcept;

  /// Copies the node's network counters into the segment (NetworkStats).
  /// One writer: a StatsSource's refresh_stats(), on the service thread.
  void write_network(const NetworkCounters& counters, std::int64_t now_ns) noexcept;

  /// Registers an endpoint for refresh() until remove_source().
  void add_source(StatsSource* source);
  void remove_source(StatsSource* source) noexcept;
  /// Calls every source's refresh_stats(). The node's service thread.
  void refresh() noexcept;
  [[nodiscard]] bool has_sources() const noexcept;

  /// How often the service thread calls refresh().
  static constexpr std::int64_t kRefreshPeriodNs = 1'000'000'000;

 private:
  EndpointStats(std::string path, MappedSegment mapping, const StatsLayout& layout) noexcept;

  std::string path_;
  MappedSegment mapping_;
  StatsLayout layout_;
  StatsSegment* head_;
  NetworkStats* network_;
  PublisherStats* publishers_;
  SubscriberStats* subscribers_;
  bool removed_ = false;
  mutable std::mutex mutex_;                 ///< Guards what follows.
  std::vector<bool> subscriber_used_;        ///< Reserved or live subscriber entries.
  std::uint32_t subscribers_allocated_ = 0;  ///< Entries [0, this) have memory.
  std::vector<StatsSource*> sources_;
};

}  // namespace axon::shm
