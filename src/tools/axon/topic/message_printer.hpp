// Turns a topic's messages into JSON without their C++ types, from the schema the topic stores
// (docs/design/schemas.md), with the formats' own reflection: FlatBuffers' Parser (the binary schema
// deserialized, GenerateText), Protobuf's DescriptorPool and DynamicMessageFactory (MessageToJsonString).
// Raw structs described with axon::RawFields print their fields from the stored description; undescribed raw
// structs, and messages whose schema is not stored, print as their bytes in hex.
//
// Thread safety: none (one printer per thread). Allocates.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "axon/result.hpp"
#include "axon/transport.hpp"

namespace axon::tools {

class MessagePrinter {
 public:
  /// A printer for `topic`'s messages. Never fails: a schema that cannot be used makes it print hex, and
  /// hex_reason() says why.
  explicit MessagePrinter(const TopicRecord& topic);
  ~MessagePrinter();
  MessagePrinter(const MessagePrinter&) = delete;
  MessagePrinter& operator=(const MessagePrinter&) = delete;
  MessagePrinter(MessagePrinter&&) = delete;
  MessagePrinter& operator=(MessagePrinter&&) = delete;

  /// One message as compact JSON: the message's fields (FlatBuffers: names as in the .fbs, default values
  /// included; Protobuf: names as in the .proto, every field; a described raw struct: the fields its
  /// axon::RawFields lists), or {"type":..,"size":..,"hex":".."} when it prints hex. kMalformed when the bytes
  /// are not a valid message of the schema (a raw struct: not exactly its size).
  [[nodiscard]] Result<std::string> to_json(std::span<const std::byte> message) const;
  /// The message as {"type":..,"size":..,["version":..,]"hex":".."} (what to_json() prints without a schema).
  [[nodiscard]] std::string hex_json(std::span<const std::byte> message) const;
  /// Empty when messages print as fields; else why they print as hex, in the user's words.
  [[nodiscard]] const std::string& hex_reason() const noexcept { return hex_reason_; }

  class Format;  ///< How one format prints (message_printer.cpp).

 private:
  TypeIdentity type_;
  std::unique_ptr<Format> format_;  ///< nullptr: hex.
  std::string hex_reason_;
};

/// `bytes` as lowercase hex, two digits a byte.
[[nodiscard]] std::string to_hex(std::span<const std::byte> bytes);

}  // namespace axon::tools
