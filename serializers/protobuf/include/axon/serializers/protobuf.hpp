// Protobuf through axon: serialized straight into a loaned chunk (sized by
// ByteSizeLong(), no std::string in between), parsed by the subscriber into
// a message object it reuses from sample to sample.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "axon/serializer.hpp"
#include "axon/type_identity.hpp"

namespace axon {

namespace detail {

/// Full name of the message type, and a hash of its file's
/// FileDescriptorProto and those of every file it imports.
TypeIdentity protobuf_identity(const google::protobuf::Descriptor* descriptor);

/// The schema a Protobuf topic stores for tools (docs/design/schemas.md): a
/// serialized google::protobuf::FileDescriptorSet of the message's file and
/// every file it imports, each after the files it imports (the order a
/// DescriptorPool builds them in).
std::vector<std::byte> protobuf_schema(const google::protobuf::Descriptor* descriptor);

template <class T>
concept ProtobufMessage = std::is_base_of_v<google::protobuf::Message, T>;

}  // namespace detail

template <detail::ProtobufMessage T>
struct Serializer<T> {
  static constexpr std::string_view kName = "protobuf";
  static constexpr DataPath kDataPath = DataPath::kSerializedInSharedMemory;
  static constexpr bool kReadsInPlace = false;

  static TypeIdentity identity() {
    static const TypeIdentity kIdentity = detail::protobuf_identity(T::descriptor());
    return kIdentity;
  }
  /// The FileDescriptorSet of T's file and its imports (built once).
  static std::vector<std::byte> schema() {
    static const std::vector<std::byte> kSchema = detail::protobuf_schema(T::descriptor());
    return kSchema;
  }
  /// Also caches the sizes that encode() relies on.
  static std::size_t encoded_size(const T& value) { return value.ByteSizeLong(); }
  static std::size_t encode(const T& value, std::span<std::byte> out) noexcept {
    auto* begin = reinterpret_cast<std::uint8_t*>(out.data());
    return static_cast<std::size_t>(value.SerializeWithCachedSizesToArray(begin) - begin);
  }
  static bool decode(std::span<const std::byte> in, T& out) noexcept {
    return in.size() <= static_cast<std::size_t>(INT32_MAX) &&
           out.ParseFromArray(in.data(), static_cast<int>(in.size()));
  }
};

}  // namespace axon

#include "axon/serializers/protobuf_service.hpp"  // services of Protobuf messages (needs the above)
