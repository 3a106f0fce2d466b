// Operations on a domain's registry segment. Every call that reads or writes
// the tables needs the domain lock and takes its guard; only topic_version(),
// room_freed() and subscriber_wake() (words other processes move without the
// lock) and format() (a segment nobody else sees yet) do not.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "axon/options.hpp"
#include "axon/result.hpp"
#include "axon/transport.hpp"
#include "transports/shm/domain_lock.hpp"
#include "transports/shm/pool_segment.hpp"
#include "transports/shm/process_identity.hpp"
#include "transports/shm/registry_layout.hpp"

namespace axon::shm {

/// An entry reference that survives slot reuse.
struct SlotRef {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  friend bool operator==(const SlotRef&, const SlotRef&) = default;
};

/// How many endpoints the domain has, per topic and per participant: what
/// advertise() and subscribe() check the connection limits against, from the
/// registry alone (no peer's pool needed).
struct EndpointCounts {
  explicit EndpointCounts(const RegistryLimits& limits)
      : publishers(limits.topics),
        subscribers(limits.topics),
        connections(limits.participants),
        subscriber_queue_slots(limits.topics),
        queue_slots(limits.participants) {}
  std::vector<std::uint32_t> publishers;   ///< Per topic slot.
  std::vector<std::uint32_t> subscribers;  ///< Per topic slot.
  /// Per participant slot: the connections its pool needs to connect every
  /// subscriber of each of its publishers' topics (the sum of those topics'
  /// subscriber counts, one per publisher).
  std::vector<std::uint32_t> connections;
  /// Per topic slot: the queue slots one publisher's connections to all its
  /// subscribers take (each subscriber's depth rounded up to a power of two).
  std::vector<std::uint32_t> subscriber_queue_slots;
  /// Per participant slot: the queue slots its pool needs for those connections.
  std::vector<std::uint32_t> queue_slots;
};

/// The queue slots a connection to a subscriber of `depth` takes (depth as
/// another process wrote it: clamped, it only counts).
[[nodiscard]] std::uint32_t queue_slots_for_depth(std::uint32_t depth) noexcept;

/// Why `limits` is out of range (RegistryLimits::in_range()), naming the
/// deployment file's key and its range. Slow path: allocates.
[[nodiscard]] std::string limits_range_message(const RegistryLimits& limits);

/// "nodes N, topics N, publishers N, subscribers N, publishers_per_topic N":
/// the limits in the deployment file's words, for messages. Allocates.
[[nodiscard]] std::string describe_limits(const RegistryLimits& limits);

/// A registry's tables as this process reaches them: their places come from
/// a RegistryLayout this process computed (from limits it checked), never
/// from offsets in shared memory, and the limits are this process's copy.
class Registry {
 public:
  Registry() = default;
  /// `segment` is mapped with at least `layout.total_bytes`.
  Registry(RegistrySegment* segment, const RegistryLayout& layout) noexcept;

  /// Fresh tables and limits in a segment of `layout.total_bytes`; the
  /// caller set up the header.
  static void format(RegistrySegment* segment, const RegistryLayout& layout) noexcept;

  /// The table sizes (lock-free: fixed for the registry's life). Every index
  /// another process wrote is checked against these before use.
  [[nodiscard]] const RegistryLimits& limits() const noexcept { return limits_; }

  Result<SlotRef> add_participant(const DomainLockGuard& held, const ProcessIdentity& id, std::string_view name,
                                  std::uint64_t pool_bytes, std::uint32_t connections = kDefaultConnectionsPerNode,
                                  std::uint32_t queue_slots = kDefaultQueueSlotsPerNode);
  /// Frees the participant and every publisher and subscriber it had.
  void remove_participant(const DomainLockGuard& held, std::uint32_t slot) noexcept;
  [[nodiscard]] bool participant_is(const DomainLockGuard& held, const SlotRef& ref) const noexcept;
  [[nodiscard]] const ParticipantEntry& participant(const DomainLockGuard& /*held*/,
                                                    std::uint32_t slot) const noexcept {
    return participants_[slot];
  }
  [[nodiscard]] std::uint32_t active_participants(const DomainLockGuard& held) const noexcept;
  /// Active participants whose process is gone (checks /proc).
  [[nodiscard]] std::vector<std::uint32_t> dead_participants(const DomainLockGuard& held) const;

  /// Where schema files of this domain's topics lie (topic_schema_file.hpp):
  /// a topic freed with a schema state other than kNone has its file
  /// unlinked. Unset (tests of the tables alone): no file is touched.
  void set_schema_files(std::string shm_dir, std::uint32_t domain_id) {
    schema_dir_ = std::move(shm_dir);
    domain_id_ = domain_id;
  }

  /// The topic `topic.name`, created with `topic`'s type when new; an error
  /// naming both types when it exists with another type.
  Result<std::uint32_t> find_or_add_topic(const DomainLockGuard& held, const TopicDescriptor& topic);
  /// The active topic named `name`, if any.
  [[nodiscard]] std::optional<std::uint32_t> find_topic(const DomainLockGuard& held, std::string_view name) const;
  /// Records the state of `topic`'s schema file (and, once kStored, its size
  /// and hash, which readers check the file against).
  void set_topic_schema(const DomainLockGuard& held, std::uint32_t topic, SchemaState state, std::uint32_t bytes = 0,
                        std::uint64_t hash = 0) noexcept;
  /// Frees `topic` when no publisher or subscriber uses it (with its schema
  /// file): for a caller that created it and then failed.
  void release_topic_if_unused(const DomainLockGuard& held, std::uint32_t topic) noexcept;

  /// `transport`: EndpointEntry::transport (at most kMaxCarriedByBytes bytes kept).
  Result<SlotRef> add_publisher(const DomainLockGuard& held, std::uint32_t topic, SlotRef participant,
                                std::uint32_t pool_block, std::string_view transport = "shm");
  /// `stats_slot`: its entry in this participant's statistics segment.
  /// The error add_subscriber() would give for a full table, or nothing:
  /// asked before anything else is reserved for the subscriber, so that a
  /// full domain is named as such (limits.subscribers).
  [[nodiscard]] Result<void> subscriber_room(const DomainLockGuard& held) const;
  Result<SlotRef> add_subscriber(const DomainLockGuard& held, std::uint32_t topic, SlotRef participant,
                                 const SubscriberQos& qos, const EffectiveQueue& queue = {},
                                 std::uint32_t stats_slot = kNoStatsSlot, std::string_view transport = "shm");
  /// The futex word of a subscriber slot.
  [[nodiscard]] WakeWord& subscriber_wake(std::uint32_t slot) noexcept { return subscriber_wake_[slot].word; }
  /// The domain's graph word (lock-free): moves whenever an endpoint entry
  /// is added or removed.
  [[nodiscard]] WakeWord& graph_word() noexcept { return seg_->graph_wake.word; }
  /// Wakes every waiting subscriber of `topic` (its publishers changed).
  void wake_subscribers(const DomainLockGuard& held, std::uint32_t topic) noexcept;
  /// Lock-free: a publisher of `topic` freed connections. Bumps the topic's
  /// version, so that a subscriber that could not connect for lack of room
  /// rescans when it next looks; waking the sleeping ones needs the lock
  /// (wake_subscribers()). `topic` is the caller's own, registered topic.
  void room_freed(std::uint32_t topic) noexcept { bump_version(topic); }
  void remove_publisher(const DomainLockGuard& held, std::uint32_t slot) noexcept;
  void remove_subscriber(const DomainLockGuard& held, std::uint32_t slot) noexcept;
  [[nodiscard]] bool subscriber_is(const DomainLockGuard& held, const SlotRef& ref) const noexcept;
  /// Counts every active endpoint. Entries whose topic or participant is out
  /// of range (another process wrote them) are not counted.
  /// Slow path: allocates.
  [[nodiscard]] EndpointCounts count_endpoints(const DomainLockGuard& held) const;

  [[nodiscard]] const EndpointEntry& publisher(const DomainLockGuard& /*held*/, std::uint32_t slot) const noexcept {
    return publishers_[slot];
  }
  [[nodiscard]] const EndpointEntry& subscriber(const DomainLockGuard& /*held*/, std::uint32_t slot) const noexcept {
    return subscribers_[slot];
  }
  [[nodiscard]] const TopicEntry& topic(const DomainLockGuard& /*held*/, std::uint32_t slot) const noexcept {
    return topics_[slot];
  }

  /// Lock-free: moves whenever a publisher of `topic` comes or goes (or frees
  /// connections, see connections_changed()).
  [[nodiscard]] std::uint64_t topic_version(std::uint32_t topic) const noexcept {
    // Acquire pairs with the release increment in bump_version(): a reader that
    // sees the new version and then takes the lock sees the new tables.
    return topics_[topic].publishers_version.load(std::memory_order_acquire);
  }

 private:
  void bump_version(std::uint32_t topic) noexcept;
  /// An endpoint entry was added or removed: moves the graph word, wakes its waiters.
  void graph_changed() noexcept;

  RegistrySegment* seg_ = nullptr;
  RegistryLimits limits_{};
  ParticipantEntry* participants_ = nullptr;
  TopicEntry* topics_ = nullptr;
  EndpointEntry* publishers_ = nullptr;
  EndpointEntry* subscribers_ = nullptr;
  SubscriberWake* subscriber_wake_ = nullptr;
  std::string schema_dir_;  ///< Empty: no schema files (set_schema_files()).
  std::uint32_t domain_id_ = 0;
};

}  // namespace axon::shm
