#include "transports/udp/local_topics.hpp"

#include <algorithm>

namespace axon::udp {

std::uint64_t topic_id_of(std::string_view topic_name) noexcept { return detail::fnv1a(topic_name); }

SubscriptionQos subscription_qos_of(const SubscriberQos& qos) noexcept {
  return SubscriptionQos{
      .reliability = qos.reliability, .overflow = qos.overflow, .block_timeout_ns = qos.block_timeout_ns};
}

namespace {

/// How strongly an overflow asks the sender to keep a message it has no credit for.
int overflow_rank(Overflow overflow) noexcept {
  switch (overflow) {
    case Overflow::kBlockPublisher: return 3;
    case Overflow::kDropOldest:
    case Overflow::kLatestOnly: return 2;
    case Overflow::kRejectNewest: return 1;
    case Overflow::kDefault: break;
  }
  return 0;
}

bool may_block(const SubscriptionQos& qos) noexcept {
  return qos.reliability == Reliability::kReliable || qos.overflow == Overflow::kBlockPublisher;
}

}  // namespace

SubscriptionQos strictest(const std::vector<SubscriptionQos>& all) noexcept {
  SubscriptionQos result;
  for (const SubscriptionQos& qos : all) {
    if (qos.reliability == Reliability::kReliable) {
      result.reliability = Reliability::kReliable;
    }
    if (overflow_rank(qos.overflow) > overflow_rank(result.overflow)) {
      result.overflow = qos.overflow;
    }
    if (may_block(qos)) {
      result.block_timeout_ns = std::max(result.block_timeout_ns, qos.block_timeout_ns);
    }
  }
  return result;
}

void LocalTopics::add(const TopicDescriptor& topic, const SubscriptionQos& qos) {
  const bool reliable = qos.reliability == Reliability::kReliable;
  const std::uint64_t id = topic_id_of(topic.name);
  std::lock_guard guard(mutex_);
  Topic& local = topics_[id];
  if (local.subscriptions == 0) {
    local.descriptor = topic;
  }
  ++local.subscriptions;
  local.reliable += reliable ? 1 : 0;
  local.qos.push_back(qos);
  if (!local.receiver) {
    local.receiver = ReceiverLock::try_acquire(domain_id_, host_, id);
  }
}

void LocalTopics::remove(std::string_view topic_name, const SubscriptionQos& qos) {
  const bool reliable = qos.reliability == Reliability::kReliable;
  std::lock_guard guard(mutex_);
  const auto found = topics_.find(topic_id_of(topic_name));
  if (found == topics_.end()) {
    return;
  }
  --found->second.subscriptions;
  found->second.reliable -= reliable ? 1 : 0;
  std::vector<SubscriptionQos>& kept = found->second.qos;
  if (const auto one = std::find(kept.begin(), kept.end(), qos); one != kept.end()) {
    kept.erase(one);
  }
  if (found->second.subscriptions == 0) {
    topics_.erase(found);  // lets the receiver lock go: another participant of this host takes over
  }
}

std::vector<AnnounceEntry> LocalTopics::announce_entries() const {
  std::vector<AnnounceEntry> entries;
  std::lock_guard guard(mutex_);
  entries.reserve(topics_.size());
  for (const auto& [id, topic] : topics_) {
    entries.push_back(AnnounceEntry{.topic_id = id,
                                    .type_hash = topic.descriptor.type.hash,
                                    .type_name_hash = detail::fnv1a(topic.descriptor.type.name),
                                    .flags = (topic.reliable > 0 ? kEntryReliable : 0U) |
                                             (topic.receiver ? kEntryReceiver : 0U) |
                                             (topic.descriptor.allow_compatible_evolution ? kEntryEvolution : 0U),
                                    .subscribers = topic.subscriptions});
  }
  return entries;
}

std::vector<std::string> LocalTopics::acquire_receivers() {
  std::vector<std::string> acquired;
  std::lock_guard guard(mutex_);
  for (auto& [id, topic] : topics_) {
    if (!topic.receiver) {
      topic.receiver = ReceiverLock::try_acquire(domain_id_, host_, id);
      if (topic.receiver) {
        acquired.push_back(topic.descriptor.name);
      }
    }
  }
  return acquired;
}

std::optional<TopicDescriptor> LocalTopics::received_here(std::uint64_t topic_id) const {
  std::lock_guard guard(mutex_);
  const auto topic = topics_.find(topic_id);
  if (topic == topics_.end() || !topic->second.receiver) {
    return std::nullopt;  // not ours to receive (another participant of this host does)
  }
  return topic->second.descriptor;
}

std::optional<ReceivedTopic> LocalTopics::received_topic(std::uint64_t topic_id) const {
  std::lock_guard guard(mutex_);
  const auto topic = topics_.find(topic_id);
  if (topic == topics_.end() || !topic->second.receiver) {
    return std::nullopt;
  }
  return ReceivedTopic{.descriptor = topic->second.descriptor, .qos = strictest(topic->second.qos)};
}

}  // namespace axon::udp
