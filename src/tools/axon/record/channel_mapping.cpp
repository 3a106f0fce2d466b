// Topic to MCAP schema and channel (channel_mapping.hpp).
#include "src/tools/axon/record/channel_mapping.hpp"

#include <cinttypes>
#include <cstdio>

namespace axon::tools {

std::string type_hash_text(std::uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016" PRIx64, hash);
  return text;
}

ChannelDefinition channel_definition(const TopicRecord& topic, const std::vector<std::string>& publisher_nodes,
                                     const std::string& qos) {
  const TypeIdentity& type = topic.type;
  ChannelDefinition out;
  out.topic = topic.name;
  out.schema_key = type.serializer + "/" + type.name + "/" + type_hash_text(type.hash);
  out.schema_name = type.name;
  // The stored schema is the format's own file as it is: a .bfbs for FlatBuffers, a serialized
  // FileDescriptorSet for Protobuf (src/tools/axon/topic/schema_loader.cpp reads them unwrapped), the
  // AXRAWF1 description for raw structs (empty when the struct is not described).
  const auto* stored = reinterpret_cast<const std::uint8_t*>(topic.schema.data());
  if (type.serializer == "flatbuffers") {
    out.schema_encoding = "flatbuffer";
    out.message_encoding = "flatbuffer";
  } else if (type.serializer == "protobuf") {
    out.schema_encoding = "protobuf";
    out.message_encoding = "protobuf";
  } else if (type.serializer == "raw") {
    out.schema_encoding = "axon.raw";
    out.message_encoding = "axon.raw";
  } else {
    out.message_encoding = "axon." + type.serializer;
  }
  if (!out.schema_encoding.empty()) {
    out.schema_data.assign(stored, stored + topic.schema.size());
  }
  std::string nodes;
  for (const std::string& node : publisher_nodes) {
    nodes += (nodes.empty() ? "" : ",") + node;
  }
  out.metadata = {{"axon.type_name", type.name},
                  {"axon.type_hash", type_hash_text(type.hash)},
                  {"axon.serializer", type.serializer},
                  {"axon.type_size", std::to_string(type.size)},
                  {"axon.type_align", std::to_string(type.align)},
                  {"axon.type_version", std::to_string(type.version)},
                  {"axon.max_payload_bytes", std::to_string(topic.max_payload_bytes)},
                  {"axon.publisher_nodes", nodes},
                  {"axon.qos", qos}};
  return out;
}

}  // namespace axon::tools
