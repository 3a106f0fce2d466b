#include "src/tools/axon/topic/message_printer.hpp"

#include <flatbuffers/idl.h>
#include <flatbuffers/reflection.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/util/json_util.h>

#include <climits>
#include <cstdint>
#include <string_view>
#include <utility>

#include "src/tools/axon/json_writer.hpp"
#include "src/tools/axon/topic/raw_description.hpp"
#include "src/tools/axon/topic/schema_loader.hpp"

namespace axon::tools {

class MessagePrinter::Format {
 public:
  virtual ~Format() = default;
  [[nodiscard]] virtual Result<std::string> to_json(std::span<const std::byte> message) const = 0;
};

namespace {

const std::uint8_t* bytes_of(std::span<const std::byte> bytes) {
  return reinterpret_cast<const std::uint8_t*>(bytes.data());
}

/// FlatBuffers: the binary schema deserialized into a Parser; each message verified against the root table
/// with the reflection verifier before GenerateText reads it.
class FlatBuffersFormat final : public MessagePrinter::Format {
 public:
  /// Empty reason: ready.
  FlatBuffersFormat(std::span<const std::byte> bfbs, const std::string& type_name, std::string& reason)
      : bfbs_(bytes_of(bfbs), bytes_of(bfbs) + bfbs.size()), parser_(options()) {
    // From our copy, which outlives the parser (the reflection objects below point into it).
    if (auto loaded = load_flatbuffers_schema(parser_, std::as_bytes(std::span(bfbs_)), type_name); !loaded) {
      reason = loaded.error().message();
      return;
    }
    schema_ = reflection::GetSchema(bfbs_.data());  // verified by load_flatbuffers_schema()
    root_ = schema_->objects()->LookupByKey(type_name.c_str());
    if (root_ == nullptr) {
      reason = "its stored FlatBuffers binary schema has no table '" + type_name + "'";
    }
  }

  Result<std::string> to_json(std::span<const std::byte> message) const override {
    if (!flatbuffers::Verify(*schema_, *root_, bytes_of(message), message.size())) {
      return Error(ErrorCode::kMalformed, "a message did not verify as its schema's table; printed as hex");
    }
    std::string text;
    if (!flatbuffers::GenerateText(parser_, message.data(), &text)) {
      return Error(ErrorCode::kMalformed, "flatbuffers::GenerateText could not print a message");
    }
    return text;
  }

 private:
  static flatbuffers::IDLOptions options() {
    flatbuffers::IDLOptions opts;
    opts.strict_json = true;                     // quoted names: JSON, not FlatBuffers' own text format
    opts.output_default_scalars_in_json = true;  // every field, as the Protobuf printer does
    opts.indent_step = -1;                       // one line
    opts.natural_utf8 = true;
    return opts;
  }

  std::vector<std::uint8_t> bfbs_;
  const reflection::Schema* schema_ = nullptr;
  const reflection::Object* root_ = nullptr;
  flatbuffers::Parser parser_;
};

/// Protobuf: a DescriptorPool built from the stored FileDescriptorSet, a dynamic message of the type parsed
/// from each message's bytes.
class ProtobufFormat final : public MessagePrinter::Format {
 public:
  ProtobufFormat(std::span<const std::byte> schema, const std::string& type_name, std::string& reason) {
    auto descriptor = load_protobuf_schema(pool_, schema, type_name);
    if (!descriptor) {
      reason = descriptor.error().message();
      return;
    }
    prototype_ = factory_.GetPrototype(*descriptor);
    message_.reset(prototype_->New());
  }

  Result<std::string> to_json(std::span<const std::byte> message) const override {
    message_->Clear();
    if (message.size() > INT_MAX || !message_->ParseFromArray(message.data(), static_cast<int>(message.size()))) {
      return Error(ErrorCode::kMalformed, "a message did not parse as its schema's type; printed as hex");
    }
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;     // the .proto's names, as FlatBuffers prints the .fbs's
    options.always_print_primitive_fields = true;  // zeros too: a field is there whatever its value
    std::string text;
    if (auto status = google::protobuf::util::MessageToJsonString(*message_, &text, options); !status.ok()) {
      return Error(ErrorCode::kMalformed, "Protobuf could not print a message: " + std::string(status.message()));
    }
    return text;
  }

  [[nodiscard]] bool ready() const noexcept { return message_ != nullptr; }

 private:
  google::protobuf::DescriptorPool pool_;
  google::protobuf::DynamicMessageFactory factory_{&pool_};
  const google::protobuf::Message* prototype_ = nullptr;
  std::unique_ptr<google::protobuf::Message> message_;
};

/// Raw structs described with axon::RawFields: the description read back and checked (raw_description.hpp),
/// each message its fields when it has the described struct's size.
class RawFieldsFormat final : public MessagePrinter::Format {
 public:
  RawFieldsFormat(std::span<const std::byte> schema, const TypeIdentity& type, std::string& reason) {
    auto decoded = decode_raw_description(schema);
    if (!decoded) {
      reason = std::string(decoded.error().message());
      return;
    }
    const detail::raw_fields::StructDescription& root = decoded->structs[0];
    if (root.size_bytes != type.size || root.type_name != type.name) {
      reason = "its raw field description is of '" + root.type_name + "' (" + std::to_string(root.size_bytes) +
               " bytes), not of the topic's type '" + type.name + "' (" + std::to_string(type.size) + " bytes)";
      return;
    }
    description_ = std::move(*decoded);
  }

  Result<std::string> to_json(std::span<const std::byte> message) const override {
    if (message.size() != description_.structs[0].size_bytes) {
      return Error(ErrorCode::kMalformed, "a message does not have the described struct's size; printed as hex");
    }
    JsonWriter json;
    write_raw_message(json, description_, message);
    return json.text();
  }

 private:
  RawDescription description_;
};

}  // namespace

MessagePrinter::MessagePrinter(const TopicRecord& topic) : type_(topic.type) {
  const std::string& serializer = topic.type.serializer;
  const bool has_schema_format = serializer == "flatbuffers" || serializer == "protobuf" || serializer == "raw";
  if (!has_schema_format) {
    hex_reason_ = "its messages are " + serializer + " (no schema describes their fields)";
    return;
  }
  if (topic.schema.empty()) {
    hex_reason_ = !topic.schema_problem.empty() ? topic.schema_problem
                  : serializer == "raw"
                      ? "it carries a raw struct that no publisher described (specialize axon::RawFields<T> for "
                        "its type, axon/raw_fields.hpp, to print its fields)"
                  : serializer == "flatbuffers"
                      ? "no publisher stored a schema for it (its FlatBuffers code was generated without an "
                        "embedded binary schema: NO_BINARY_SCHEMA, or a schema file without root_type)"
                      : "no publisher stored a schema for it";
    return;
  }
  std::string reason;
  if (serializer == "flatbuffers") {
    format_ = std::make_unique<FlatBuffersFormat>(topic.schema, topic.type.name, reason);
  } else if (serializer == "protobuf") {
    format_ = std::make_unique<ProtobufFormat>(topic.schema, topic.type.name, reason);
  } else {
    format_ = std::make_unique<RawFieldsFormat>(topic.schema, topic.type, reason);
  }
  if (!reason.empty()) {
    format_.reset();
    hex_reason_ = std::move(reason);
  }
}

MessagePrinter::~MessagePrinter() = default;

Result<std::string> MessagePrinter::to_json(std::span<const std::byte> message) const {
  if (format_ == nullptr) {
    return hex_json(message);
  }
  return format_->to_json(message);
}

std::string MessagePrinter::hex_json(std::span<const std::byte> message) const {
  JsonWriter json;
  json.begin_object().member("type", type_.name).member("size", message.size());
  if (type_.serializer == "raw") {
    json.member("version", type_.version);
  }
  json.member("hex", to_hex(message)).end_object();
  return json.text();
}

std::string to_hex(std::span<const std::byte> bytes) {
  static constexpr std::string_view kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const std::byte b : bytes) {
    out += kDigits[static_cast<std::uint8_t>(b) >> 4];
    out += kDigits[static_cast<std::uint8_t>(b) & 0xF];
  }
  return out;
}

}  // namespace axon::tools
