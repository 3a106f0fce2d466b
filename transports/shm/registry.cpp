#include "transports/shm/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <span>

#include "src/base/futex.hpp"
#include "transports/shm/shared_checks.hpp"
#include "transports/shm/topic_schema_file.hpp"

namespace axon::shm {
namespace {

template <std::size_t N>
void copy_name(char (&dest)[N], std::string_view src) noexcept {
  const std::size_t n = std::min(src.size(), N - 1);
  std::memcpy(dest, src.data(), n);
  dest[n] = '\0';
}

template <class Entry>
Entry* first_free(Entry* table, std::uint32_t count, std::uint32_t& slot) noexcept {
  for (std::uint32_t i = 0; i < count; ++i) {
    if (table[i].state == EntryState::kFree) {
      slot = i;
      return &table[i];
    }
  }
  return nullptr;
}

/// A full table, in the user's words: the key that raises it and when that applies.
Error table_full(std::uint32_t count, std::string_view what, std::string_view key, std::string_view also) {
  return {ErrorCode::kLimitReached,
          fmt::format("the domain already has {} {}{}: raise limits.{} in the deployment file (or "
                      "NodeOptions::domain_limits.{}); the node that creates the domain sets its limits, so stop "
                      "every process of the domain and start them again with the new value",
                      count, what, also, key, key)};
}

std::string describe_type(std::string_view name, std::uint64_t hash, std::uint32_t size) {
  return fmt::format("'{}' ({} bytes, hash {:#018x})", name, size, hash);
}

}  // namespace

std::string limits_range_message(const RegistryLimits& limits) {
  struct Key {
    std::string_view name;
    std::uint32_t value;
    std::uint32_t max;
  };
  for (const Key& k :
       {Key{"nodes", limits.participants, kMaxParticipantsLimit}, Key{"topics", limits.topics, kMaxTopicsLimit},
        Key{"publishers", limits.publishers, kMaxPublishersLimit},
        Key{"subscribers", limits.subscribers, kMaxSubscribersLimit},
        Key{"publishers_per_topic", limits.publishers_per_topic, kMaxPublishersPerTopicLimit}}) {
    if (k.value < 1 || k.value > k.max) {
      return fmt::format("limits.{} (NodeOptions::domain_limits.{}) is {}; it must be 1..{}", k.name, k.name, k.value,
                         k.max);
    }
  }
  return {};
}

std::string describe_limits(const RegistryLimits& limits) {
  return fmt::format("nodes {}, topics {}, publishers {}, subscribers {}, publishers_per_topic {}", limits.participants,
                     limits.topics, limits.publishers, limits.subscribers, limits.publishers_per_topic);
}

Registry::Registry(RegistrySegment* segment, const RegistryLayout& layout) noexcept
    : seg_(segment), limits_(layout.limits) {
  auto* base = reinterpret_cast<std::byte*>(segment);
  participants_ = std::launder(reinterpret_cast<ParticipantEntry*>(base + layout.participants_offset));
  topics_ = std::launder(reinterpret_cast<TopicEntry*>(base + layout.topics_offset));
  publishers_ = std::launder(reinterpret_cast<EndpointEntry*>(base + layout.publishers_offset));
  subscribers_ = std::launder(reinterpret_cast<EndpointEntry*>(base + layout.subscribers_offset));
  subscriber_wake_ = std::launder(reinterpret_cast<SubscriberWake*>(base + layout.subscriber_wake_offset));
}

void Registry::format(RegistrySegment* segment, const RegistryLayout& layout) noexcept {
  auto* base = reinterpret_cast<std::byte*>(segment);
  const RegistryLimits& limits = layout.limits;
  segment->limits = limits;
  new (base + layout.participants_offset) ParticipantEntry[limits.participants]();
  new (base + layout.topics_offset) TopicEntry[limits.topics]();
  new (base + layout.publishers_offset) EndpointEntry[limits.publishers]();
  new (base + layout.subscribers_offset) EndpointEntry[limits.subscribers]();
  new (base + layout.subscriber_wake_offset) SubscriberWake[limits.subscribers]();
  new (&segment->graph_wake) SubscriberWake();
}

Result<SlotRef> Registry::add_participant(const DomainLockGuard& /*held*/, const ProcessIdentity& id,
                                          std::string_view name, std::uint64_t pool_bytes, std::uint32_t connections,
                                          std::uint32_t queue_slots) {
  std::uint32_t slot = 0;
  ParticipantEntry* entry = first_free(participants_, limits_.participants, slot);
  if (entry == nullptr) {
    return table_full(limits_.participants, "participants (nodes)", "nodes", " (close some, or use another domain)");
  }
  entry->generation += 1;
  entry->pid = id.pid;
  entry->start_time = id.start_time;
  entry->pool_bytes = pool_bytes;
  entry->connections = connections;
  entry->queue_slots = queue_slots;
  copy_name(entry->name, name);
  entry->state = EntryState::kActive;
  return SlotRef{slot, entry->generation};
}

void Registry::remove_participant(const DomainLockGuard& held, std::uint32_t slot) noexcept {
  for (std::uint32_t i = 0; i < limits_.publishers; ++i) {
    if (publishers_[i].state == EntryState::kActive && publishers_[i].participant == slot) {
      remove_publisher(held, i);
    }
  }
  for (std::uint32_t i = 0; i < limits_.subscribers; ++i) {
    if (subscribers_[i].state == EntryState::kActive && subscribers_[i].participant == slot) {
      remove_subscriber(held, i);
    }
  }
  participants_[slot].state = EntryState::kFree;
}

bool Registry::participant_is(const DomainLockGuard& /*held*/, const SlotRef& ref) const noexcept {
  if (ref.slot >= limits_.participants) {
    return false;
  }
  const ParticipantEntry& p = participants_[ref.slot];
  return p.state == EntryState::kActive && p.generation == ref.generation;
}

std::uint32_t Registry::active_participants(const DomainLockGuard& /*held*/) const noexcept {
  return static_cast<std::uint32_t>(
      std::count_if(participants_, participants_ + limits_.participants,
                    [](const ParticipantEntry& p) { return p.state == EntryState::kActive; }));
}

std::vector<std::uint32_t> Registry::dead_participants(const DomainLockGuard& /*held*/) const {
  std::vector<std::uint32_t> dead;
  for (std::uint32_t i = 0; i < limits_.participants; ++i) {
    const ParticipantEntry& p = participants_[i];
    if (p.state == EntryState::kActive && !is_alive({.pid = p.pid, .start_time = p.start_time})) {
      dead.push_back(i);
    }
  }
  return dead;
}

Result<std::uint32_t> Registry::find_or_add_topic(const DomainLockGuard& /*held*/, const TopicDescriptor& topic) {
  if (topic.name.empty() || topic.name.size() >= kMaxTopicNameBytes) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("topic name '{}' must have 1 to {} characters", topic.name, kMaxTopicNameBytes - 1));
  }
  for (std::uint32_t i = 0; i < limits_.topics; ++i) {
    TopicEntry& t = topics_[i];
    // strnlen: another process may have left the name without its NUL.
    if (t.state != EntryState::kActive || topic.name != std::string_view(t.name, ::strnlen(t.name, sizeof(t.name)))) {
      continue;
    }
    const bool same_format = topic.type.serializer == t.serializer;
    if (!same_format) {
      return Error(
          ErrorCode::kTypeMismatch,
          fmt::format("topic '{}' carries {} messages of type {}, but this endpoint uses {} "
                      "messages of type {}; use the same serializer and type everywhere",
                      topic.name, t.serializer, describe_type(t.type_name, t.type_hash, t.type_size),
                      topic.type.serializer, describe_type(topic.type.name, topic.type.hash, topic.type.size)));
    }
    // Opt-in schema evolution: FlatBuffers and Protobuf readers and writers
    // of one type name stay compatible when fields are only added.
    const bool evolves = topic.allow_compatible_evolution && topic.type.name == t.type_name &&
                         (topic.type.serializer == "flatbuffers" || topic.type.serializer == "protobuf");
    if (t.type_hash != topic.type.hash && !evolves) {
      return Error(ErrorCode::kTypeMismatch,
                   fmt::format("topic '{}' carries type {}, but this endpoint uses type {}; use the "
                               "same message type (and version) in every process of the topic, or "
                               "allow_compatible_evolution for FlatBuffers/Protobuf schemas that only added fields",
                               topic.name, describe_type(t.type_name, t.type_hash, t.type_size),
                               describe_type(topic.type.name, topic.type.hash, topic.type.size)));
    }
    return i;
  }
  std::uint32_t slot = 0;
  TopicEntry* t = first_free(topics_, limits_.topics, slot);
  if (t == nullptr) {
    return table_full(limits_.topics, "topics", "topics", " (a topic is freed with its last endpoint)");
  }
  t->generation += 1;
  t->type_hash = topic.type.hash;
  t->type_size = topic.type.size;
  t->type_align = topic.type.align;
  t->type_version = topic.type.version;
  t->schema_state = SchemaState::kNone;
  t->schema_bytes = 0;
  t->schema_hash = 0;
  t->max_payload_bytes = topic.max_payload_bytes;
  copy_name(t->name, topic.name);
  copy_name(t->type_name, topic.type.name);
  copy_name(t->serializer, topic.type.serializer);
  t->state = EntryState::kActive;
  return slot;
}

std::optional<std::uint32_t> Registry::find_topic(const DomainLockGuard& /*held*/, std::string_view name) const {
  for (std::uint32_t i = 0; i < limits_.topics; ++i) {
    const TopicEntry& t = topics_[i];
    // strnlen: another process may have left the name without its NUL.
    if (t.state == EntryState::kActive && name == std::string_view(t.name, ::strnlen(t.name, sizeof(t.name)))) {
      return i;
    }
  }
  return std::nullopt;
}

void Registry::set_topic_schema(const DomainLockGuard& /*held*/, std::uint32_t topic, SchemaState state,
                                std::uint32_t bytes, std::uint64_t hash) noexcept {
  TopicEntry& t = topics_[topic];
  t.schema_bytes = bytes;
  t.schema_hash = hash;
  t.schema_state = state;
}

namespace {

/// Writes `transport` NUL-padded into the entry, cut to what it holds.
void set_transport(EndpointEntry& e, std::string_view transport) noexcept {
  std::memset(e.transport, 0, sizeof(e.transport));
  std::memcpy(e.transport, transport.data(), std::min(transport.size(), sizeof(e.transport) - 1));
}

}  // namespace

Result<SlotRef> Registry::add_publisher(const DomainLockGuard& held, std::uint32_t topic, SlotRef participant,
                                        std::uint32_t pool_block, std::string_view transport) {
  std::uint32_t slot = 0;
  EndpointEntry* e = first_free(publishers_, limits_.publishers, slot);
  if (e == nullptr) {
    return table_full(limits_.publishers, "publishers", "publishers", "");
  }
  e->generation += 1;
  e->topic = topic;
  e->participant = participant.slot;
  e->participant_generation = participant.generation;
  e->pool_block = pool_block;
  e->stats_slot = pool_block;  // a publisher's statistics entry is its block's
  set_transport(*e, transport);
  e->state = EntryState::kActive;
  bump_version(topic);
  // Sleeping subscribers connect to the new publisher now, not on their
  // next timeout.
  wake_subscribers(held, topic);
  graph_changed();
  return SlotRef{slot, e->generation};
}

Result<void> Registry::subscriber_room(const DomainLockGuard& /*held*/) const {
  for (std::uint32_t i = 0; i < limits_.subscribers; ++i) {
    if (subscribers_[i].state == EntryState::kFree) {
      return {};
    }
  }
  return table_full(limits_.subscribers, "subscribers", "subscribers", "");
}

Result<SlotRef> Registry::add_subscriber(const DomainLockGuard& /*held*/, std::uint32_t topic, SlotRef participant,
                                         const SubscriberQos& qos, const EffectiveQueue& queue,
                                         std::uint32_t stats_slot, std::string_view transport) {
  std::uint32_t slot = 0;
  EndpointEntry* e = first_free(subscribers_, limits_.subscribers, slot);
  if (e == nullptr) {
    return table_full(limits_.subscribers, "subscribers", "subscribers", "");
  }
  e->generation += 1;
  e->topic = topic;
  e->participant = participant.slot;
  e->participant_generation = participant.generation;
  e->depth = queue.depth;
  e->overflow = static_cast<std::uint32_t>(queue.overflow);
  e->block_timeout_ns = qos.block_timeout_ns;
  e->quarantine_after_ns = qos.quarantine_after_ns;
  e->reliable = qos.reliability == Reliability::kReliable ? 1 : 0;
  e->stats_slot = stats_slot;
  set_transport(*e, transport);
  // A waiter of a crashed predecessor may have left its count behind.
  subscriber_wake_[slot].word.waiters.store(0, std::memory_order_relaxed);
  e->state = EntryState::kActive;
  graph_changed();
  return SlotRef{slot, e->generation};
}

void Registry::remove_publisher(const DomainLockGuard& held, std::uint32_t slot) noexcept {
  EndpointEntry& e = publishers_[slot];
  e.state = EntryState::kFree;
  graph_changed();
  if (e.topic >= limits_.topics) {  // written by another process: never an index unchecked
    report_corruption(
        Corruption::kPublisherEntry,
        fmt::format("registry publisher entry {} names topic {} (the domain has {})", slot, e.topic, limits_.topics));
    return;
  }
  bump_version(e.topic);
  // Sleeping subscribers learn that a publisher left (or died) now, not
  // with their next message.
  wake_subscribers(held, e.topic);
  release_topic_if_unused(held, e.topic);
}

void Registry::wake_subscribers(const DomainLockGuard& /*held*/, std::uint32_t topic) noexcept {
  // Orders the version bump before the waiter counts are read (see futex.hpp).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (std::uint32_t i = 0; i < limits_.subscribers; ++i) {
    if (subscribers_[i].state == EntryState::kActive && subscribers_[i].topic == topic) {
      futex::notify_if_waiting(subscriber_wake_[i].word);
    }
  }
}

void Registry::remove_subscriber(const DomainLockGuard& held, std::uint32_t slot) noexcept {
  EndpointEntry& e = subscribers_[slot];
  e.state = EntryState::kFree;
  graph_changed();
  if (e.topic >= limits_.topics) {
    report_corruption(
        Corruption::kSubscriberEntry,
        fmt::format("registry subscriber entry {} names topic {} (the domain has {})", slot, e.topic, limits_.topics));
    return;
  }
  release_topic_if_unused(held, e.topic);
}

bool Registry::subscriber_is(const DomainLockGuard& /*held*/, const SlotRef& ref) const noexcept {
  if (ref.slot >= limits_.subscribers) {
    return false;
  }
  const EndpointEntry& e = subscribers_[ref.slot];
  return e.state == EntryState::kActive && e.generation == ref.generation;
}

std::uint32_t queue_slots_for_depth(std::uint32_t depth) noexcept {
  return std::bit_ceil(std::clamp<std::uint32_t>(depth, 1, kRingCapacity));
}

EndpointCounts Registry::count_endpoints(const DomainLockGuard& /*held*/) const {
  EndpointCounts counts(limits_);
  for (const EndpointEntry& e : std::span(subscribers_, limits_.subscribers)) {
    if (e.state == EntryState::kActive && e.topic < limits_.topics) {
      ++counts.subscribers[e.topic];
      counts.subscriber_queue_slots[e.topic] += queue_slots_for_depth(e.depth);
    }
  }
  for (const EndpointEntry& e : std::span(publishers_, limits_.publishers)) {
    if (e.state == EntryState::kActive && e.topic < limits_.topics && e.participant < limits_.participants) {
      ++counts.publishers[e.topic];
      counts.connections[e.participant] += counts.subscribers[e.topic];
      counts.queue_slots[e.participant] += counts.subscriber_queue_slots[e.topic];
    }
  }
  return counts;
}

void Registry::bump_version(std::uint32_t topic) noexcept {
  // Seq_cst: besides pairing with the acquire in topic_version(), ordered
  // before wake_subscribers() reads the waiter counts (futex::Waiter).
  topics_[topic].publishers_version.fetch_add(1, std::memory_order_seq_cst);
}

void Registry::graph_changed() noexcept {
  // Seq_cst: the entry written before (under the domain lock) is visible to
  // a watcher that sees the new sequence, and the bump comes before the read
  // of `waiters` in notify_if_waiting() (futex::Waiter's protocol: either
  // the watcher sees the bump or we see the watcher).
  seg_->graph_wake.word.sequence.fetch_add(1, std::memory_order_seq_cst);
  futex::full_fence();
  futex::notify_if_waiting(seg_->graph_wake.word);
}

void Registry::release_topic_if_unused(const DomainLockGuard& /*held*/, std::uint32_t topic) noexcept {
  auto uses = [topic](const EndpointEntry& e) { return e.state == EntryState::kActive && e.topic == topic; };
  if (std::none_of(publishers_, publishers_ + limits_.publishers, uses) &&
      std::none_of(subscribers_, subscribers_ + limits_.subscribers, uses)) {
    // The version keeps counting across reuse so a stale reader still rescans.
    TopicEntry& t = topics_[topic];
    // kWriting too: its writer may have died between creating and recording the file.
    if (t.schema_state != SchemaState::kNone && !schema_dir_.empty()) {
      unlink_schema_file(schema_dir_.c_str(), domain_id_, topic, t.generation);
    }
    t.schema_state = SchemaState::kNone;
    t.state = EntryState::kFree;
  }
}

}  // namespace axon::shm
