// Publishing on a topic without its C++ type (tools, replay, test drivers):
// Node::advertise_any() adopts the type the topic already has in the domain,
// so that typed subscribers in other processes take its messages exactly as
// from a typed publisher. The messages are bytes the caller encoded (from
// the topic's schema, say: `axon topic pub`).
#pragma once

#include <memory>
#include <optional>

#include "axon/bytes.hpp"
#include "axon/options.hpp"
#include "axon/publisher.hpp"
#include "axon/transport.hpp"

namespace axon {

/// How Node::advertise_any() publishes.
struct AnyPublicationOptions {
  /// The publisher's QoS. std::nullopt: the deployment config's QoS for the
  /// topic when it lists it, else the defaults (as Node::advertise(topic)).
  std::optional<PublisherQos> qos;
};

/// A publication on a topic of whatever type it carries: a bytes publisher
/// that joined as the topic's type (identity, serializer and schema hash as
/// the domain records them; loan(n) bytes, write, publish), and the topic's
/// record (type identity and schema) to encode messages with. The publisher
/// stores no schema: the topic has the one its typed endpoints stored.
struct AnyPublication {
  std::shared_ptr<Publisher<Bytes>> publisher;
  TopicRecord topic;
};

}  // namespace axon
