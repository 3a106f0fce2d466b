// Services of Protobuf messages (docs/design/services.md, "Formats"): the
// header and the message are serialized straight into a loaned chunk (the
// caller's message is encoded where it is, no copy of it is made), and the
// other side decodes them into an envelope from its subscriber's DecodedPool,
// reused from reply to reply. Included by <axon/serializers/protobuf.hpp>.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>

#include "axon/outcome.hpp"
#include "axon/publisher.hpp"
#include "axon/serializer.hpp"
#include "axon/serializers/protobuf.hpp"
#include "axon/service_format.hpp"
#include "axon/service_message.hpp"

namespace axon {

namespace detail {

/// A Protobuf request or reply as a subscriber decodes it.
template <ProtobufMessage T>
struct ProtobufServiceMessage {
  ServiceHeader header;
  T body;
};

/// A Protobuf request or reply to send: the header and the caller's message,
/// encoded from where it is. Lives for one publish.
template <ProtobufMessage T>
struct ProtobufServiceOutgoing {
  ServiceHeader header;
  const T* body = nullptr;
  ~ProtobufServiceOutgoing() {}  // NOLINT(modernize-use-equals-default): not trivial, so never a raw message
};

}  // namespace detail

/// What a Protobuf service subscriber decodes: the header, then T.
template <detail::ProtobufMessage T>
struct Serializer<detail::ProtobufServiceMessage<T>> {
  using Message = detail::ProtobufServiceMessage<T>;
  static constexpr std::string_view kName = "protobuf";
  static constexpr DataPath kDataPath = DataPath::kSerializedInSharedMemory;
  static constexpr bool kReadsInPlace = false;

  static TypeIdentity identity() {
    static const TypeIdentity kIdentity = detail::service_envelope_identity(Serializer<T>::identity());
    return kIdentity;
  }
  static std::size_t encoded_size(const Message& value) {
    return detail::kServiceHeaderBytes + Serializer<T>::encoded_size(value.body);
  }
  static std::size_t encode(const Message& value, std::span<std::byte> out) noexcept {
    std::memcpy(out.data(), &value.header, detail::kServiceHeaderBytes);
    return detail::kServiceHeaderBytes + Serializer<T>::encode(value.body, out.subspan(detail::kServiceHeaderBytes));
  }
  static bool decode(std::span<const std::byte> in, Message& out) noexcept {
    if (in.size() < detail::kServiceHeaderBytes) {
      return false;
    }
    std::memcpy(&out.header, in.data(), detail::kServiceHeaderBytes);
    return Serializer<T>::decode(in.subspan(detail::kServiceHeaderBytes), out.body);
  }
};

/// What a Protobuf service publisher encodes: the same bytes, from the
/// caller's message.
template <detail::ProtobufMessage T>
struct Serializer<detail::ProtobufServiceOutgoing<T>> {
  using Message = detail::ProtobufServiceOutgoing<T>;
  static constexpr std::string_view kName = "protobuf";
  static constexpr DataPath kDataPath = DataPath::kSerializedInSharedMemory;
  static constexpr bool kReadsInPlace = false;

  static TypeIdentity identity() { return Serializer<detail::ProtobufServiceMessage<T>>::identity(); }
  /// Also caches the sizes that encode() relies on.
  static std::size_t encoded_size(const Message& value) {
    return detail::kServiceHeaderBytes + Serializer<T>::encoded_size(*value.body);
  }
  static std::size_t encode(const Message& value, std::span<std::byte> out) noexcept {
    std::memcpy(out.data(), &value.header, detail::kServiceHeaderBytes);
    return detail::kServiceHeaderBytes + Serializer<T>::encode(*value.body, out.subspan(detail::kServiceHeaderBytes));
  }
};

namespace detail {

/// Protobuf services: requests and replies serialized into loaned chunks;
/// the server's handler fills a reply message the server keeps and clears.
template <ProtobufMessage T>
struct ServiceFormat<T> {
  using Incoming = ProtobufServiceMessage<T>;
  using Outgoing = ProtobufServiceOutgoing<T>;
  static constexpr bool kEncodesFromValue = true;
  template <class Req>
  using Handler = std::function<void(const Req& request, T& reply)>;
  using ServerScratch = T;  ///< The reply message, reused (its memory too).

  static ServiceHeader header(const Incoming& message) noexcept { return message.header; }
  static const T& body(const Incoming& message) noexcept { return message.body; }
  static Outgoing outgoing(const ServiceHeader& header, const T& value) noexcept {
    return Outgoing{.header = header, .body = &value};
  }

  /// Clears the kept reply, lets the handler fill it, serializes it into a
  /// loaned chunk.
  template <class Req>
  static PublishResult reply(Publisher<Outgoing>& out, const ServiceHeader& header, const Req& request,
                             const Handler<Req>& handler, ServerScratch& scratch) noexcept {
    scratch.Clear();
    handler(request, scratch);
    return out.publish(outgoing(header, scratch));
  }
};

}  // namespace detail
}  // namespace axon
