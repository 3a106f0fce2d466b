#include "transports/udp/local_topics.hpp"

namespace axon::udp {

std::uint64_t topic_id_of(std::string_view topic_name) noexcept { return detail::fnv1a(topic_name); }

void LocalTopics::add(const TopicDescriptor& topic, bool reliable) {
  const std::uint64_t id = topic_id_of(topic.name);
  std::lock_guard guard(mutex_);
  Topic& local = topics_[id];
  if (local.subscriptions == 0) {
    local.descriptor = topic;
  }
  ++local.subscriptions;
  local.reliable += reliable ? 1 : 0;
  if (!local.receiver) {
    local.receiver = ReceiverLock::try_acquire(domain_id_, host_, id);
  }
}

void LocalTopics::remove(std::string_view topic_name, bool reliable) {
  std::lock_guard guard(mutex_);
  const auto found = topics_.find(topic_id_of(topic_name));
  if (found == topics_.end()) {
    return;
  }
  --found->second.subscriptions;
  found->second.reliable -= reliable ? 1 : 0;
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

}  // namespace axon::udp
