#include "transports/shm/topic_schemas.hpp"

#include <fmt/format.h>

#include <cstring>
#include <string>

#include "transports/shm/topic_schema_file.hpp"

namespace axon::shm {
namespace {

template <std::size_t N>
std::string text_of(const char (&field)[N]) {
  // strnlen: another process wrote it and may have left out the NUL.
  return {field, ::strnlen(field, N)};
}

}  // namespace

Result<void> check_schema_size(const TopicDescriptor& topic) {
  if (topic.schema.size() <= kMaxSchemaBytes) {
    return {};
  }
  return Error(ErrorCode::kInvalidArgument,
               fmt::format("topic '{}': the schema of its type '{}' has {} bytes, more than the {} bytes a topic "
                           "stores for tools (kMaxSchemaBytes); generate the FlatBuffers code without an embedded "
                           "schema (axon_add_flatbuffers_schemas(... NO_BINARY_SCHEMA)) or import fewer .proto files "
                           "into the message's file",
                           topic.name, topic.type.name, topic.schema.size(), kMaxSchemaBytes));
}

Result<void> store_topic_schema(const DomainLockGuard& held, Registry& registry, const Domain& domain,
                                std::uint32_t topic_slot, std::span<const std::byte> schema) {
  const TopicEntry& entry = registry.topic(held, topic_slot);
  if (schema.empty() || entry.schema_state != SchemaState::kNone) {
    return {};  // written once: the first endpoint (publisher or typed subscriber) that has a schema wins
  }
  const ShmConfig& config = domain.config();
  const std::string path = schema_file_path(config.shm_dir, config.domain_id, topic_slot, entry.generation);
  // Recorded before the file exists: a writer that dies in between leaves a
  // name that the topic's release unlinks.
  registry.set_topic_schema(held, topic_slot, SchemaState::kWriting);
  if (auto written = write_schema_file(path, schema, entry.generation, config.file_mode, config.group); !written) {
    registry.set_topic_schema(held, topic_slot, SchemaState::kNone);
    return Error(written.error().code(), fmt::format("topic '{}': storing its schema for tools failed: {}",
                                                     text_of(entry.name), written.error().message()));
  }
  registry.set_topic_schema(held, topic_slot, SchemaState::kStored, static_cast<std::uint32_t>(schema.size()),
                            schema_hash(schema));
  return {};
}

Result<TopicRecord> read_topic_record(Domain& domain, std::string_view topic) {
  TopicRecord record;
  record.name = std::string(topic);
  std::uint32_t slot = 0;
  TopicEntry copy;  // the entry as it was under the lock (the atomic aside)
  {
    auto held = domain.lock().lock();
    if (!held) {
      return held.error();
    }
    if (!domain.registry_intact(*held)) {
      return domain.damaged_registry_error(topic);
    }
    Registry& registry = domain.registry(*held);
    const auto found = registry.find_topic(*held, topic);
    if (!found) {
      return Error(ErrorCode::kNotFound,
                   fmt::format("topic '{}' does not exist in domain {}: no publisher or subscriber of this host has "
                               "it (check the name and the domain, or start its publisher first)",
                               topic, domain.config().domain_id));
    }
    slot = *found;
    const TopicEntry& entry = registry.topic(*held, slot);
    copy.generation = entry.generation;
    copy.type_hash = entry.type_hash;
    copy.max_payload_bytes = entry.max_payload_bytes;
    copy.type_size = entry.type_size;
    copy.type_align = entry.type_align;
    copy.type_version = entry.type_version;
    copy.schema_state = entry.schema_state;
    copy.schema_bytes = entry.schema_bytes;
    copy.schema_hash = entry.schema_hash;
    std::memcpy(copy.type_name, entry.type_name, sizeof(copy.type_name));
    std::memcpy(copy.serializer, entry.serializer, sizeof(copy.serializer));
  }
  record.type.name = text_of(copy.type_name);
  record.type.hash = copy.type_hash;
  record.type.size = copy.type_size;
  record.type.align = copy.type_align;
  record.type.version = copy.type_version;
  record.type.serializer = text_of(copy.serializer);
  record.max_payload_bytes = copy.max_payload_bytes;
  if (copy.schema_state == SchemaState::kStored) {
    const ShmConfig& config = domain.config();
    auto schema = read_schema_file(schema_file_path(config.shm_dir, config.domain_id, slot, copy.generation),
                                   copy.schema_bytes, copy.schema_hash, copy.generation);
    if (schema) {
      record.schema = std::move(*schema);
    } else {
      record.schema_problem = std::string(schema.error().message());
    }
  }
  return record;
}

}  // namespace axon::shm
