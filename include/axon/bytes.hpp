// Bytes: the untyped topic endpoint of bridges, recorders and tools. It
// loans N bytes, publishes them with zero copy and takes a span of bytes,
// and it always carries a declared type identity, so that it can never
// silently feed a typed subscriber something else:
//
//   - node->advertise<axon::Bytes>(topic) / subscribe<axon::Bytes>(topic):
//     a topic of untyped bytes ("axon::Bytes", serializer "bytes"); typed
//     endpoints are refused on it, as any other type would be.
//   - node->advertise_bytes(topic, carries) / subscribe_bytes(topic,
//     carries): bytes of the type `carries` names (type_identity_of<T>(), or
//     an identity a bridge read from a recording or a peer). The endpoint
//     joins the topic as that type: a mismatch is refused like a typed one.
//     A bytes publisher also refuses loans of a size the type cannot have (a
//     raw struct: exactly its size; a slice: a whole number of elements),
//     and typed subscribers still verify what arrives (FlatBuffers verify,
//     Protobuf parse, slices check size and alignment) and count rejections.
//
//     auto bridge = *node->advertise_bytes("pose", axon::type_identity_of<Pose>());
//     if (auto loan = bridge->loan(bytes.size())) {
//       std::memcpy(loan->data(), bytes.data(), bytes.size());
//       (void)bridge->publish(std::move(*loan));
//     }
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "axon/serializer.hpp"
#include "axon/type_identity.hpp"

namespace axon {

/// Names an untyped bytes endpoint: Publisher<Bytes>::loan(n) gives n bytes
/// (a Loan whose elements are a std::span<std::byte>), Subscriber<Bytes>
/// takes a Sample whose elements are a std::span<const std::byte>. A tag
/// only, never constructed.
struct Bytes {
  Bytes() = delete;
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
  ~Bytes() = delete;
};

template <>
struct Serializer<Bytes> {
  static constexpr std::string_view kName = "bytes";
  static constexpr DataPath kDataPath = DataPath::kZeroCopy;
  static constexpr bool kReadsInPlace = true;
  static constexpr bool kLoansElements = true;
  /// The endpoint may carry another type's identity (Node::advertise_bytes).
  static constexpr bool kCarriesDeclaredType = true;
  using Element = std::byte;

  /// The untyped topic's own identity (when no carried type is given).
  static TypeIdentity identity() { return bytes_type_identity(); }
  static detail::ElementView<std::byte> view_elements(std::span<const std::byte> in) noexcept { return {in, {}}; }
};

}  // namespace axon
