// The topics this participant's node subscribes to over UDP: what it
// announces to remote hosts, and which of them it receives for its whole host
// (it holds that topic's ReceiverLock).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "axon/options.hpp"
#include "axon/transport.hpp"
#include "transports/udp/receiver_lock.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp {

/// The topic id on the wire: a hash of the topic's name.
[[nodiscard]] std::uint64_t topic_id_of(std::string_view topic_name) noexcept;

/// What one local subscription asks of the messages it gets from other
/// hosts: the RDMA receive half answers a stream's OPEN with the strictest
/// of them (its sender then drops, keeps the last, or blocks without credit).
struct SubscriptionQos {
  Reliability reliability = Reliability::kBestEffort;
  Overflow overflow = Overflow::kDefault;
  std::int64_t block_timeout_ns = 0;
  bool operator==(const SubscriptionQos&) const = default;
};
[[nodiscard]] SubscriptionQos subscription_qos_of(const SubscriberQos& qos) noexcept;

/// The strictest of `all`: reliable when any is; the overflow of the
/// strongest sender policy (block-publisher, then drop-oldest / latest-only
/// (keep the last), then reject-newest, then default); the longest
/// block_timeout_ns of those that may make a publisher wait. Empty: the defaults.
[[nodiscard]] SubscriptionQos strictest(const std::vector<SubscriptionQos>& all) noexcept;

/// A topic this participant receives for its host: its descriptor and its
/// local subscribers' strictest QoS.
struct ReceivedTopic {
  TopicDescriptor descriptor;
  SubscriptionQos qos;
};

/// Thread safety: every method from any thread. Its mutex is a leaf: held
/// only inside these methods, which call no other class of the participant.
class LocalTopics {
 public:
  LocalTopics(std::uint32_t domain_id, std::string host) : domain_id_(domain_id), host_(std::move(host)) {}

  /// One more subscription of `topic`; tries to become its receiver for this host.
  void add(const TopicDescriptor& topic, const SubscriptionQos& qos);
  /// One fewer (the `qos` add() was given); the last one gone lets the receiver lock go (another participant of
  /// this host takes over).
  void remove(std::string_view topic_name, const SubscriptionQos& qos);

  /// What the next ANNOUNCE says about them.
  [[nodiscard]] std::vector<AnnounceEntry> announce_entries() const;
  /// Tries the receiver locks not held yet; returns the names of the topics received here from now on.
  std::vector<std::string> acquire_receivers();
  /// The topic's descriptor when this participant receives it for the host; nullopt otherwise.
  [[nodiscard]] std::optional<TopicDescriptor> received_here(std::uint64_t topic_id) const;
  /// received_here() with the subscribers' strictest QoS (what an RDMA stream's OPEN is answered with).
  [[nodiscard]] std::optional<ReceivedTopic> received_topic(std::uint64_t topic_id) const;

 private:
  struct Topic {
    TopicDescriptor descriptor;
    std::uint32_t subscriptions = 0;
    std::uint32_t reliable = 0;
    std::vector<SubscriptionQos> qos;      ///< One per subscription (subscribe time only: allocation is fine).
    std::optional<ReceiverLock> receiver;  ///< Held: this participant receives the topic for its host.
  };

  const std::uint32_t domain_id_;
  const std::string host_;
  mutable std::mutex mutex_;
  std::map<std::uint64_t, Topic> topics_;  ///< Guarded by mutex_.
};

}  // namespace axon::udp
