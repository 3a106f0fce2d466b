// Subscribing to a topic without its C++ type (tools, recorders, bridges):
// Node::subscribe_any() adopts the type the topic already has in the domain
// and hands out each message's bytes in place, with the topic's schema.
#pragma once

#include <chrono>
#include <memory>

#include "axon/bytes.hpp"
#include "axon/options.hpp"
#include "axon/subscriber.hpp"
#include "axon/transport.hpp"

namespace axon {

/// How Node::subscribe_any() finds its topic and subscribes.
struct AnySubscriptionOptions {
  /// How long to wait for the topic's first publisher. Zero: no wait, and a
  /// topic that no endpoint has yet is refused (kNotFound). Negative: waits
  /// without end. Positive: kTimeout when none appeared in that time.
  std::chrono::nanoseconds wait_for_publisher{0};
  SubscriberQos qos{};
};

/// A subscription to a topic of whatever type it carries: a bytes
/// subscriber that joined as the topic's type (its samples are each
/// message's bytes in shared memory, zero copy, and their SampleInfo), and
/// the topic's record (type identity and schema) to read them with.
struct AnySubscription {
  std::shared_ptr<Subscriber<Bytes>> subscriber;
  TopicRecord topic;
};

}  // namespace axon
