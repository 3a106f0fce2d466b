#include "src/tools/axon/topic/message_encoder.hpp"

#include <flatbuffers/idl.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/util/json_util.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "src/tools/axon/topic/schema_loader.hpp"

namespace axon::tools {
namespace {

/// FlatBuffers: the binary schema deserialized into a Parser whose root is the topic's table; ParseJson builds
/// the message in the parser's builder, whose finished buffer is the message.
class FlatBuffersEncoder final : public MessageEncoder {
 public:
  explicit FlatBuffersEncoder(std::span<const std::byte> bfbs) : bfbs_(bfbs.begin(), bfbs.end()) {}

  Result<void> load(const std::string& type_name) {
    return load_flatbuffers_schema(parser_, std::span<const std::byte>(bfbs_), type_name);
  }

  Result<void> parse(const std::string& json) override {
    // ParseJson resets the builder and finishes it at the root table (with the schema's file_identifier).
    if (!parser_.ParseJson(json.c_str())) {
      return Error(ErrorCode::kInvalidArgument, trimmed(parser_.error_));
    }
    return {};
  }

  [[nodiscard]] std::size_t size() const override { return parser_.builder_.GetSize(); }

  [[nodiscard]] std::size_t write(std::span<std::byte> out) const override {
    const std::size_t bytes = size();
    std::memcpy(out.data(), parser_.builder_.GetBufferPointer(), bytes);
    return bytes;
  }

 private:
  /// The parser's message ("2: 17: error: unknown field: x") in words: "line 2, column 17: unknown field: x".
  static std::string trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
      text.pop_back();
    }
    unsigned line = 0;
    unsigned column = 0;
    int consumed = 0;
    if (std::sscanf(text.c_str(), "%u: %u: error: %n", &line, &column, &consumed) == 2 && consumed > 0) {
      return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + text.substr(consumed);
    }
    return text;
  }

  std::vector<std::byte> bfbs_;  ///< Ours: the parser is built from it.
  flatbuffers::Parser parser_;
};

/// Protobuf: a DescriptorPool built from the stored FileDescriptorSet, a dynamic message of the topic's type
/// filled by JsonStringToMessage (field names as in the .proto or in lowerCamelCase, as Protobuf's JSON allows)
/// and serialized straight into the loaned chunk.
class ProtobufEncoder final : public MessageEncoder {
 public:
  Result<void> load(std::span<const std::byte> schema, const std::string& type_name) {
    auto descriptor = load_protobuf_schema(pool_, schema, type_name);
    if (!descriptor) {
      return descriptor.error();
    }
    message_.reset(factory_.GetPrototype(*descriptor)->New());
    return {};
  }

  Result<void> parse(const std::string& json) override {
    message_->Clear();
    if (auto status = google::protobuf::util::JsonStringToMessage(json, message_.get()); !status.ok()) {
      return Error(ErrorCode::kInvalidArgument, std::string(status.message()));
    }
    size_ = message_->ByteSizeLong();
    if (size_ > INT_MAX) {
      return Error(ErrorCode::kPayloadTooLarge, "the message has " + std::to_string(size_) +
                                                    " bytes encoded, more than the 2 GiB a Protobuf message may have");
    }
    return {};
  }

  [[nodiscard]] std::size_t size() const override { return size_; }

  [[nodiscard]] std::size_t write(std::span<std::byte> out) const override {
    (void)message_->SerializeToArray(out.data(), static_cast<int>(size_));  // sized by ByteSizeLong() above
    return size_;
  }

 private:
  google::protobuf::DescriptorPool pool_;
  google::protobuf::DynamicMessageFactory factory_{&pool_};
  std::unique_ptr<google::protobuf::Message> message_;
  std::size_t size_ = 0;
};

}  // namespace

Result<std::unique_ptr<MessageEncoder>> MessageEncoder::create(const TopicRecord& topic) {
  const std::string& serializer = topic.type.serializer;
  const std::string what = "topic '" + topic.name + "' (" + topic.type.name + ", " + serializer + ")";
  if (serializer != "flatbuffers" && serializer != "protobuf") {
    return Error(ErrorCode::kInvalidArgument,
                 what + ": topic pub needs a FlatBuffers or Protobuf topic; a " +
                     (serializer == "raw" ? std::string("raw struct") : serializer) +
                     " topic has no schema to build its messages from JSON (publish it from a program)");
  }
  if (topic.schema.empty()) {
    return Error(ErrorCode::kNotFound,
                 what + ": no schema to build its messages from: " +
                     (!topic.schema_problem.empty() ? topic.schema_problem
                      : serializer == "flatbuffers"
                          ? std::string("none of its endpoints stored one (its FlatBuffers code was generated "
                                        "without an embedded binary schema: NO_BINARY_SCHEMA, or a schema file "
                                        "without root_type)")
                          : std::string("none of its endpoints stored one")));
  }
  auto failed = [&](const Error& error) { return Error(error.code(), what + ": " + std::string(error.message())); };
  if (serializer == "flatbuffers") {
    auto encoder = std::make_unique<FlatBuffersEncoder>(topic.schema);
    if (auto loaded = encoder->load(topic.type.name); !loaded) {
      return failed(loaded.error());
    }
    return std::unique_ptr<MessageEncoder>(std::move(encoder));
  }
  auto encoder = std::make_unique<ProtobufEncoder>();
  if (auto loaded = encoder->load(topic.schema, topic.type.name); !loaded) {
    return failed(loaded.error());
  }
  return std::unique_ptr<MessageEncoder>(std::move(encoder));
}

}  // namespace axon::tools
