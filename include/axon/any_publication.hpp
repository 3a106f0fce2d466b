// Publishing on a topic without its C++ type (tools, replay, test drivers):
// Node::advertise_any() adopts the type the topic already has in the domain,
// or, given a declared type (a recording's), creates the topic as that type
// when it is absent, so that typed subscribers in other processes take its
// messages exactly as from a typed publisher. The messages are bytes the
// caller encoded (from the topic's schema, say: `axon topic pub`, or as
// recorded: `axon play`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "axon/bytes.hpp"
#include "axon/options.hpp"
#include "axon/publisher.hpp"
#include "axon/transport.hpp"

namespace axon {

/// A type the caller knows without its C++ type (a recording names it):
/// the identity, schema and largest payload a typed publisher of it would
/// register.
struct DeclaredType {
  /// As recorded: name, hash, serializer, size, align, version.
  TypeIdentity type;
  /// The schema a typed endpoint stores (.bfbs, FileDescriptorSet, raw field
  /// description; empty: none). At most kMaxSchemaBytes.
  std::vector<std::byte> schema;
  /// The topic's largest payload (0: none declared; a raw type's is its size).
  std::uint64_t max_payload_bytes = 0;
};

/// How Node::advertise_any() publishes.
struct AnyPublicationOptions {
  /// The publisher's QoS. std::nullopt: the deployment config's QoS for the
  /// topic when it lists it, else the defaults (as Node::advertise(topic)).
  std::optional<PublisherQos> qos;
  /// std::nullopt: adopt the topic's type (a topic no endpoint has is
  /// refused). Given: the topic is created as this type, with its schema,
  /// when absent, and when present its type must have the same hash (else
  /// kTypeMismatch naming both types, as a typed endpoint gets; schema
  /// evolution is not assumed for a declared type).
  std::optional<DeclaredType> declared;
};

/// A publication on a topic of whatever type it carries: a bytes publisher
/// that joined as the topic's type (identity, serializer and schema hash as
/// the domain records them; loan(n) bytes, write, publish), and the topic's
/// record (type identity and schema) to encode messages with. Without a
/// declared type the publisher stores no schema (the topic has the one its
/// typed endpoints stored); with one it stores the declared schema when the
/// topic has none yet, as a typed publisher does.
struct AnyPublication {
  std::shared_ptr<Publisher<Bytes>> publisher;
  TopicRecord topic;
};

}  // namespace axon
