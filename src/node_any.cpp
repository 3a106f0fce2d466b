// Node::subscribe_any() and Node::advertise_any(): a subscription to, and a
// publication on, a topic of whatever type the domain records for it
// (axon/any_subscription.hpp, axon/any_publication.hpp).
#include <chrono>
#include <string>

#include "axon/any_publication.hpp"
#include "axon/any_subscription.hpp"
#include "axon/node.hpp"

namespace axon {

Result<AnySubscription> Node::subscribe_any(std::string_view topic, const AnySubscriptionOptions& options) {
  if (topic.empty()) {
    return Error(ErrorCode::kInvalidArgument, "subscribe_any(): the topic name is empty");
  }
  if (options.wait_for_publisher != std::chrono::nanoseconds::zero()) {
    auto waited = wait_for_endpoints(topic, GraphEndpointKind::kPublisher, 1, options.wait_for_publisher);
    if (!waited) {
      return waited.error();
    }
    if (*waited == GraphWait::kTimedOut) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(options.wait_for_publisher).count();
      return Error(ErrorCode::kTimeout, "topic '" + std::string(topic) + "' of domain " + std::to_string(domain_id_) +
                                            " had no publisher within " + std::to_string(ms) +
                                            " ms: check the name and the domain, or start its publisher");
    }
  }
  auto record = transport_->find_topic(topic);
  if (!record) {
    return record.error();
  }
  auto subscriber = subscribe_bytes(topic, record->type, options.qos);
  if (!subscriber) {
    return subscriber.error();
  }
  return AnySubscription{.subscriber = std::move(*subscriber), .topic = std::move(*record)};
}

Result<AnyPublication> Node::advertise_any(std::string_view topic, const AnyPublicationOptions& options) {
  if (topic.empty()) {
    return Error(ErrorCode::kInvalidArgument, "advertise_any(): the topic name is empty");
  }
  if (options.declared) {
    return advertise_declared(topic, options);
  }
  auto record = transport_->find_topic(topic);
  if (!record) {
    return record.error();
  }
  // The largest payload the topic declares (its first endpoint's
  // max_payload_bytes) unless the QoS names one: refused up front, like any
  // publisher of the topic, when this node's pool has no chunk that large.
  PublisherQos qos = publisher_qos_for(topic, options.qos);
  if (qos.max_payload_bytes == 0) {
    qos.max_payload_bytes = record->max_payload_bytes;
  }
  // The recorded identity as it is (name, serializer, hash, and a raw
  // struct's size): the type check every endpoint of the topic passed.
  auto publisher = make_publisher<Bytes>(topic, qos, record->type);
  if (!publisher) {
    return publisher.error();
  }
  return AnyPublication{.publisher = std::move(*publisher), .topic = std::move(*record)};
}

Result<AnyPublication> Node::advertise_declared(std::string_view topic, const AnyPublicationOptions& options) {
  const DeclaredType& declared = *options.declared;
  PublisherQos qos = publisher_qos_for(topic, options.qos);
  // The transport creates the topic as the declared type when no endpoint has it, stores the schema when the
  // topic has none, and refuses a topic of another hash with the type-mismatch error a typed endpoint gets.
  // Evolution is off: a replayed message must be exactly the type the topic's subscribers read.
  qos.allow_compatible_evolution = false;
  if (qos.max_payload_bytes == 0) {
    qos.max_payload_bytes = declared.max_payload_bytes;
  }
  auto publisher = make_publisher<Bytes>(topic, qos, declared.type, declared.schema);
  if (!publisher) {
    return publisher.error();
  }
  // The topic as the domain now records it (the schema another endpoint stored first, say); a transport that
  // keeps no record gets the declared one.
  auto record = transport_->find_topic(topic);
  if (!record) {
    return AnyPublication{.publisher = std::move(*publisher),
                          .topic = TopicRecord{.name = std::string(topic),
                                               .type = declared.type,
                                               .max_payload_bytes = qos.max_payload_bytes,
                                               .schema = declared.schema,
                                               .schema_problem = {}}};
  }
  return AnyPublication{.publisher = std::move(*publisher), .topic = std::move(*record)};
}

}  // namespace axon
