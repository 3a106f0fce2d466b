// Writes an MCAP file as `axon record` writes one (docs/design/replay.md, "Channels": one schema per type, one
// channel per topic with the axon.* metadata, log times in ns), with mcap::Writer directly, so the play tests need
// no recorder; and channels of other tools (no axon metadata) for the skip rules.
#pragma once

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "axon/serializer.hpp"
#include "axon/type_identity.hpp"
#include "src/tools/mcap/writer.hpp"

namespace axon::test {

/// A topic as the recorder saw it: its type identity, stored schema and largest payload.
struct RecordedTopic {
  std::string name;
  TypeIdentity type;
  std::vector<std::byte> schema;
  std::uint64_t max_payload_bytes = 0;
};

/// T's topic as a typed publisher registers it.
template <class T>
RecordedTopic recorded_topic(std::string name) {
  RecordedTopic topic{.name = std::move(name), .type = type_identity_of<T>(), .schema = detail::schema_of<T>()};
  if (topic.type.serializer == "raw") {
    topic.max_payload_bytes = topic.type.size;
  }
  return topic;
}

class RecordedFile {
 public:
  explicit RecordedFile(const std::string& path) {
    auto writer = mcap::Writer::create(path, mcap::WriterOptions{.chunk_bytes = 64 * 1024, .chunk_messages = 64});
    if (!writer) {
      ADD_FAILURE() << writer.error().message();
      return;
    }
    writer_ = std::move(*writer);
  }

  /// A channel for `topic` by the convention; returns its id.
  std::uint16_t add_topic(const RecordedTopic& topic) {
    std::uint16_t& schema_id = schemas_[topic.type.hash];
    if (schema_id == 0) {
      const char* encoding = topic.type.serializer == "flatbuffers" ? "flatbuffer"
                             : topic.type.serializer == "protobuf"  ? "protobuf"
                                                                    : "axon.raw";
      const auto* data = reinterpret_cast<const std::uint8_t*>(topic.schema.data());
      schema_id = value(writer_->add_schema(topic.type.name, encoding, mcap::Bytes(data, topic.schema.size())));
    }
    const std::string encoding = topic.type.serializer == "flatbuffers" ? "flatbuffer"
                                 : topic.type.serializer == "protobuf"  ? "protobuf"
                                                                        : "axon.raw";
    char hash[17];
    std::snprintf(hash, sizeof(hash), "%016" PRIx64, topic.type.hash);
    mcap::StringMap metadata = {{"axon.type_name", topic.type.name},
                                {"axon.type_hash", hash},
                                {"axon.serializer", topic.type.serializer},
                                {"axon.type_size", std::to_string(topic.type.size)},
                                {"axon.type_align", std::to_string(topic.type.align)},
                                {"axon.type_version", std::to_string(topic.type.version)},
                                {"axon.max_payload_bytes", std::to_string(topic.max_payload_bytes)},
                                {"axon.publisher_nodes", "test_publisher"},
                                {"axon.qos", "depth=16"}};
    return value(writer_->add_channel(schema_id, topic.name, encoding, std::move(metadata)));
  }

  /// A channel of another tool: no axon metadata, the schema (when `schema_encoding` is not empty) as given.
  std::uint16_t add_foreign_channel(const std::string& topic, const std::string& message_encoding,
                                    const std::string& schema_name, const std::string& schema_encoding,
                                    const std::vector<std::uint8_t>& schema_data) {
    std::uint16_t schema_id = 0;
    if (!schema_encoding.empty()) {
      schema_id = value(writer_->add_schema(schema_name, schema_encoding, schema_data));
    }
    return value(writer_->add_channel(schema_id, topic, message_encoding, {}));
  }

  /// A message of `channel` logged at `log_time_ns` (the payload is compressed at once: not held).
  void add(std::uint16_t channel, std::uint64_t log_time_ns, const void* payload, std::size_t bytes) {
    const mcap::MessageHeader header{
        .channel_id = channel, .sequence = ++sequence_, .log_time = log_time_ns, .publish_time = log_time_ns};
    (void)value(writer_->add_message(header, mcap::Bytes(static_cast<const std::uint8_t*>(payload), bytes)));
  }
  template <class Bytes>
  void add(std::uint16_t channel, std::uint64_t log_time_ns, const Bytes& payload) {
    add(channel, log_time_ns, payload.data(), payload.size());
  }

  void close() { (void)value(writer_->close()); }

 private:
  template <class T>
  T value(Result<T> result) {
    if (!result) {
      ADD_FAILURE() << result.error().message();
      return T{};
    }
    return *result;
  }

  std::unique_ptr<mcap::Writer> writer_;
  std::map<std::uint64_t, std::uint16_t> schemas_;
  std::uint32_t sequence_ = 0;
};

}  // namespace axon::test
