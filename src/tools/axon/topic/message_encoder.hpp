// Builds a topic's messages from JSON without their C++ types, from the schema the topic stores
// (docs/design/schemas.md), with the formats' own reflection: FlatBuffers' Parser (the binary schema
// deserialized, ParseJson into its builder), Protobuf's DescriptorPool, DynamicMessageFactory and
// JsonStringToMessage. What `axon topic pub` publishes. The counterpart of MessagePrinter.
//
// Thread safety: none (one encoder per thread). Allocates.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "axon/result.hpp"
#include "axon/transport.hpp"

namespace axon::tools {

class MessageEncoder {
 public:
  /// An encoder of `topic`'s messages. Refused, with the reason in the user's words: a topic whose format no
  /// schema describes (raw structs, slices, bytes: kInvalidArgument), a FlatBuffers or Protobuf topic without
  /// a stored schema (kNotFound: why, and what to do), or a stored schema that cannot be used (kMalformed).
  static Result<std::unique_ptr<MessageEncoder>> create(const TopicRecord& topic);
  virtual ~MessageEncoder() = default;
  MessageEncoder(const MessageEncoder&) = delete;
  MessageEncoder& operator=(const MessageEncoder&) = delete;
  MessageEncoder(MessageEncoder&&) = delete;
  MessageEncoder& operator=(MessageEncoder&&) = delete;

  /// Reads `json` as one message of the topic's type (it replaces the last one). kInvalidArgument with the
  /// parser's own words (the line and column, or the field) when it does not match the schema.
  virtual Result<void> parse(const std::string& json) = 0;
  /// The encoded size of the message parse() read, in bytes.
  [[nodiscard]] virtual std::size_t size() const = 0;
  /// Writes the message parse() read into `out` (at least size() bytes: a loaned chunk). Returns the bytes
  /// written (size()).
  [[nodiscard]] virtual std::size_t write(std::span<std::byte> out) const = 0;

 protected:
  MessageEncoder() = default;
};

}  // namespace axon::tools
