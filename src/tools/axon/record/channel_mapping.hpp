// How one axon topic becomes an MCAP Schema and Channel: the convention `axon record`, `axon play` and `axon info`
// share (docs/design/mcap.md, "Topics in MCAP files"). One schema per type identity, one channel per topic.
//
// Thread safety: none needed (functions of their arguments). Allocates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "axon/transport.hpp"
#include "src/tools/mcap/records.hpp"

namespace axon::tools {

/// The Schema and Channel records of one topic, before the writer gives them ids.
struct ChannelDefinition {
  std::string topic;
  /// Which topics share a schema: the type's serializer, name and hash.
  std::string schema_key;
  std::string schema_name;
  std::string schema_encoding;  ///< "flatbuffer", "protobuf", "axon.raw"; empty: no schema (schema id 0).
  std::vector<std::uint8_t> schema_data;
  std::string message_encoding;
  mcap::StringMap metadata;
};

/// The definition of `topic` as recorded: `publisher_nodes` are the names of the nodes publishing it when the
/// recorder subscribed, `qos` the recorder's subscription QoS in short ("depth 256, drop_oldest, best_effort").
/// Serializers other than flatbuffers, protobuf and raw get no schema and the encoding "axon.<serializer>".
[[nodiscard]] ChannelDefinition channel_definition(const TopicRecord& topic,
                                                   const std::vector<std::string>& publisher_nodes,
                                                   const std::string& qos);

/// 16 lowercase hex digits.
[[nodiscard]] std::string type_hash_text(std::uint64_t hash);

}  // namespace axon::tools
