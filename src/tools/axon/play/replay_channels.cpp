#include "src/tools/axon/play/replay_channels.hpp"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "axon/type_identity.hpp"

namespace axon::tools {
namespace {

/// The value of `key` in the channel's metadata, or nullptr.
const std::string* find_metadata(const mcap::Channel& channel, std::string_view key) {
  for (const auto& [name, value] : channel.metadata) {
    if (name == key) {
      return &value;
    }
  }
  return nullptr;
}

bool has_axon_metadata(const mcap::Channel& channel) {
  for (const auto& [name, value] : channel.metadata) {
    if (name.starts_with("axon.")) {
      return true;
    }
  }
  return false;
}

/// `text` as a number of `base` with nothing after it (hex for the hash).
template <class T>
std::optional<T> parse_number(const std::string& text, int base) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, value, base);
  if (text.empty() || error != std::errc{} || at != end) {
    return std::nullopt;
  }
  return value;
}

std::vector<std::byte> schema_bytes(const mcap::Schema* schema) {
  std::vector<std::byte> bytes;
  if (schema != nullptr) {
    bytes.resize(schema->data.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = static_cast<std::byte>(schema->data[i]);
    }
  }
  return bytes;
}

/// The message encoding the recorder gives each serializer (docs/design/replay.md).
std::string_view encoding_for(std::string_view serializer) {
  if (serializer == "flatbuffers") {
    return "flatbuffer";
  }
  if (serializer == "protobuf") {
    return "protobuf";
  }
  if (serializer == "raw") {
    return "axon.raw";
  }
  return {};
}

std::variant<ReplayType, SkipReason> recorded_type(const mcap::Channel& channel, const mcap::Schema* schema) {
  const char* keys[] = {"axon.type_name",  "axon.type_hash",    "axon.serializer",       "axon.type_size",
                        "axon.type_align", "axon.type_version", "axon.max_payload_bytes"};
  for (const char* key : keys) {
    if (find_metadata(channel, key) == nullptr) {
      return SkipReason{"its axon metadata has no " + std::string(key) + " (a file cut or written by another tool?)"};
    }
  }
  const auto bad = [](std::string_view key, const std::string& value, std::string_view wanted) {
    return SkipReason{"its metadata " + std::string(key) + " is '" + value + "', not " + std::string(wanted)};
  };
  ReplayType out;
  TypeIdentity& type = out.declared.type;
  type.name = *find_metadata(channel, "axon.type_name");
  type.serializer = *find_metadata(channel, "axon.serializer");
  const std::string& hash = *find_metadata(channel, "axon.type_hash");
  const auto parsed_hash = parse_number<std::uint64_t>(hash, 16);
  if (hash.size() != 16 || !parsed_hash) {
    return bad("axon.type_hash", hash, "16 hex digits");
  }
  type.hash = *parsed_hash;
  const std::pair<const char*, std::uint32_t*> fields[] = {
      {"axon.type_size", &type.size}, {"axon.type_align", &type.align}, {"axon.type_version", &type.version}};
  for (const auto& [key, field] : fields) {
    const std::string& value = *find_metadata(channel, key);
    const auto number = parse_number<std::uint32_t>(value, 10);
    if (!number) {
      return bad(key, value, "a decimal number");
    }
    *field = *number;
  }
  const std::string& max_payload = *find_metadata(channel, "axon.max_payload_bytes");
  const auto max_payload_bytes = parse_number<std::uint64_t>(max_payload, 10);
  if (!max_payload_bytes) {
    return bad("axon.max_payload_bytes", max_payload, "a decimal number");
  }
  out.declared.max_payload_bytes = *max_payload_bytes;
  const std::string_view encoding = encoding_for(type.serializer);
  if (encoding.empty()) {
    return SkipReason{"serializer '" + type.serializer +
                      "' is not one axon play publishes (flatbuffers, protobuf, raw)"};
  }
  if (channel.message_encoding != encoding) {
    return SkipReason{"message encoding '" + channel.message_encoding + "' does not match serializer '" +
                      type.serializer + "' (the recorder writes '" + std::string(encoding) + "')"};
  }
  if (type.serializer != "raw" && (schema == nullptr || schema->data.empty())) {
    return SkipReason{"it has no schema (a " + type.serializer + " channel needs one)"};
  }
  out.declared.schema = schema_bytes(schema);
  return out;
}

/// Fowler-Noll-Vo 1a, as axon's own identities hash (axon/type_identity.hpp).
std::uint64_t fnv1a(std::span<const std::uint8_t> bytes, std::uint64_t hash) {
  for (const std::uint8_t b : bytes) {
    hash ^= b;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::variant<ReplayType, SkipReason> foreign_type(const mcap::Channel& channel, const mcap::Schema* schema) {
  std::string serializer;
  if (channel.message_encoding == "flatbuffer") {
    serializer = "flatbuffers";
  } else if (channel.message_encoding == "protobuf") {
    serializer = "protobuf";
  } else {
    return SkipReason{"message encoding '" + channel.message_encoding +
                      "' is not one axon play publishes without axon metadata (flatbuffer or protobuf with a "
                      "schema)"};
  }
  if (schema == nullptr || schema->data.empty() || schema->name.empty()) {
    return SkipReason{"it has no schema (a " + channel.message_encoding + " channel needs one)"};
  }
  ReplayType out;
  out.recorded_by_axon = false;
  out.declared.type.name = schema->name;
  out.declared.type.serializer = serializer;
  // No compiled type to take the hash from: one of the schema itself, so that two files with the same schema
  // replay onto one topic. A topic of this type name already in the domain is joined instead (player.cpp).
  out.declared.type.hash = fnv1a(schema->data, detail::fnv1a(serializer + ":" + schema->name));
  out.declared.schema = schema_bytes(schema);
  return out;
}

}  // namespace

std::variant<ReplayType, SkipReason> replay_type_of(const mcap::Channel& channel, const mcap::Schema* schema) {
  if (has_axon_metadata(channel)) {
    return recorded_type(channel, schema);
  }
  return foreign_type(channel, schema);
}

}  // namespace axon::tools
