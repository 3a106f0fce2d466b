// How a message type becomes bytes in shared memory and back: the Serializer
// customization point, and the raw-struct serializer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "axon/raw_fields.hpp"
#include "axon/result.hpp"
#include "axon/transport.hpp"
#include "axon/type_identity.hpp"

namespace axon {

/// How a message travels, reported by every publisher and subscriber so a
/// topic never falls back to copies silently.
enum class DataPath : std::uint8_t {
  kZeroCopy,                  ///< Written and read in place in shared memory.
  kSerializedInSharedMemory,  ///< Encoded straight into shared memory, decoded by the reader.
  kCopied,                    ///< Copied through an intermediate buffer.
};

[[nodiscard]] constexpr std::string_view to_string(DataPath path) noexcept {
  switch (path) {
    case DataPath::kZeroCopy: return "zero-copy";
    case DataPath::kSerializedInSharedMemory: return "serialized in shared memory";
    case DataPath::kCopied: return "copied";
  }
  return "unknown";
}

/// A finished message in a loaned chunk: `payload_bytes` starting
/// `payload_offset` bytes into the chunk's payload.
struct EncodedChunk {
  LoanedChunk chunk;
  std::size_t payload_bytes = 0;
  std::size_t payload_offset = 0;
};

/// The customization point: one specialization per message type (or family).
/// axon ships five: raw trivially copyable structs (below), FlatBuffers
/// tables (<axon/serializers/flatbuffers.hpp>), Protobuf messages
/// (<axon/serializers/protobuf.hpp>), and run-time sized messages:
/// slices of elements (<axon/slice.hpp>) and untyped bytes (<axon/bytes.hpp>). For a type of your own, specialize it
/// with the members of a *decoding* serializer (see `diagnostics::LogLine` in
/// examples/serializers_tour.cpp):
///
///     template <> struct axon::Serializer<MyType> {
///       static constexpr std::string_view kName = "my-format";
///       static constexpr DataPath kDataPath = DataPath::kSerializedInSharedMemory;
///       static constexpr bool kReadsInPlace = false;
///       static TypeIdentity identity();
///       static std::size_t encoded_size(const MyType& value);
///       static std::size_t encode(const MyType& value, std::span<std::byte> out) noexcept;
///       static bool decode(std::span<const std::byte> in, MyType& out) noexcept;
///     };
///
/// In-place serializers (kReadsInPlace = true) instead provide
/// `static const T* view(std::span<const std::byte> in, bool verify) noexcept`
/// returning nullptr for bytes that are not a valid message.
///
/// The primary template serves no type: its assertion is the first error for
/// a message type without a serializer (a struct holding a std::string, say),
/// and its members are complete so that the code using Serializer<T> (Node,
/// Publisher, Subscriber) adds no cascade of errors after it. Exactly one of
/// the two assertions fails.
template <class T, class Enable = void>
struct Serializer {
  static_assert(std::is_trivially_copyable_v<T>,
                "axon: this message type is not trivially copyable (it holds a std::string, std::vector, smart "
                "pointer or other member that owns memory, or has virtual functions), so it cannot travel as raw "
                "bytes: use a trivially copyable struct (fixed-size arrays such as char name[32]), a FlatBuffers "
                "table (#include <axon/serializers/flatbuffers.hpp>) or a Protobuf message (#include "
                "<axon/serializers/protobuf.hpp>), or specialize axon::Serializer<T>");
  static_assert(!std::is_trivially_copyable_v<T>,
                "axon has no serializer for this message type: a pointer is not a message, and a FlatBuffers table "
                "needs #include <axon/serializers/flatbuffers.hpp>; use a trivially copyable struct, a FlatBuffers "
                "table, a Protobuf message (#include <axon/serializers/protobuf.hpp>), or specialize "
                "axon::Serializer<T>");
  // Never run (the program does not compile): only there to be complete.
  static constexpr std::string_view kName = "none";
  static constexpr DataPath kDataPath = DataPath::kCopied;
  static constexpr bool kReadsInPlace = true;
  static TypeIdentity identity() { return {}; }
  static std::size_t encoded_size(const T& /*value*/) noexcept { return 0; }
  static std::size_t encode(const T& /*value*/, std::span<std::byte> /*out*/) noexcept { return 0; }
  static const T* view(std::span<const std::byte> /*in*/, bool /*verify*/) noexcept { return nullptr; }
};

namespace detail {

/// FlatBuffers tables are trivially copyable too; they are claimed by the
/// FlatBuffers serializer, recognised by what flatc generates for them.
template <class T>
concept FlatBuffersTable = requires(const T& t) {
  typename T::Builder;
  &T::Verify;
};

template <class T>
concept RawMessage = std::is_trivially_copyable_v<T> && !FlatBuffersTable<T> && !std::is_pointer_v<T>;

template <class T>
concept HasSerializer = requires {
  { Serializer<T>::kName } -> std::convertible_to<std::string_view>;
  { Serializer<T>::kDataPath } -> std::convertible_to<DataPath>;
  { Serializer<T>::kReadsInPlace } -> std::convertible_to<bool>;
  { Serializer<T>::identity() } -> std::same_as<TypeIdentity>;
};

/// Decoding serializers (Protobuf, user types) produce a T from bytes.
template <class T>
concept DecodingSerializer = HasSerializer<T> && !Serializer<T>::kReadsInPlace &&
                             requires(const T& value, T& out, std::span<std::byte> buf, std::span<const std::byte> in) {
  { Serializer<T>::encoded_size(value) } -> std::convertible_to<std::size_t>;
  { Serializer<T>::encode(value, buf) } -> std::convertible_to<std::size_t>;
  { Serializer<T>::decode(in, out) } -> std::convertible_to<bool>;
};

/// Element serializers (axon::Slice<E>, axon::Bytes; <axon/slice.hpp>,
/// <axon/bytes.hpp>): a message is a run-time number of trivially copyable
/// `Element`s, loaned with Publisher::loan(count) and read as a
/// std::span<const Element> over shared memory. Such a serializer has
/// `kLoansElements = true`, `using Element = E;` and
/// `static ElementView<E> view_elements(std::span<const std::byte>) noexcept`.
template <class T>
concept ElementMessage = HasSerializer<T> && requires {
  typename Serializer<T>::Element;
  requires Serializer<T>::kLoansElements;
};

/// The element type of an element message; a placeholder for other types
/// (so that Publisher<T> can declare its element calls for every T).
template <class T>
struct ElementOf {
  struct None {};
  using type = None;
};
template <ElementMessage T>
struct ElementOf<T> {
  using type = typename Serializer<T>::Element;
};

/// Serializers that tell their type's schema, which a publisher stores with
/// its topic for tools (docs/design/schemas.md): a FlatBuffers binary schema,
/// a Protobuf FileDescriptorSet or a raw struct's field description
/// (axon::RawFields), as `static std::vector<std::byte> schema()`.
template <class T>
concept DescribesSchema = requires {
  { Serializer<T>::schema() } -> std::same_as<std::vector<std::byte>>;
};

/// T's schema for its topic (empty: its serializer tells none).
template <class T>
std::vector<std::byte> schema_of() {
  if constexpr (DescribesSchema<T>) {
    return Serializer<T>::schema();
  } else {
    return {};
  }
}

/// Whether T's endpoints may carry another type's identity (axon::Bytes).
template <class T>
concept CarriesDeclaredType = requires {
  requires Serializer<T>::kCarriesDeclaredType;
};

/// The largest element alignment a loan promises: every transport's payload
/// starts at least this aligned (shared memory: a cache line).
inline constexpr std::size_t kMaxElementAlign = alignof(std::max_align_t);

/// What a subscriber may hand out of a payload of elements: the elements,
/// or why not (a static text, so that rejecting one allocates nothing).
template <class E>
struct ElementView {
  std::span<const E> elements;
  std::string_view problem;  ///< Empty: valid.
};

/// The elements in `in`, checked: bytes another process wrote become a span
/// only when they are a whole number of aligned elements.
template <class E>
ElementView<E> view_elements(std::span<const std::byte> in) noexcept {
  if (in.size() % sizeof(E) != 0) {
    return {.elements = {}, .problem = "its size is not a whole number of the topic's elements"};
  }
  if (reinterpret_cast<std::uintptr_t>(in.data()) % alignof(E) != 0) {
    return {.elements = {}, .problem = "its elements are not aligned for the topic's element type"};
  }
  return {.elements = std::span<const E>(reinterpret_cast<const E*>(in.data()), in.size() / sizeof(E)), .problem = {}};
}

/// The payload sizes a topic's declared type allows, read from its identity
/// (what a bytes publisher may send without every subscriber rejecting it):
/// a raw struct exactly its size, a slice a whole number of its elements,
/// any other format any size (its subscribers verify or decode it).
struct PayloadShape {
  std::size_t exact_bytes = 0;  ///< 0: no fixed size.
  std::size_t unit_bytes = 1;   ///< The size is a multiple of this.

  [[nodiscard]] bool allows(std::size_t bytes) const noexcept {
    return exact_bytes != 0 ? bytes == exact_bytes : bytes % unit_bytes == 0;
  }
};

inline PayloadShape payload_shape(const TypeIdentity& type) noexcept {
  if (type.serializer == "raw" && type.size != 0) {
    return {.exact_bytes = type.size, .unit_bytes = 1};
  }
  if (type.serializer == "slice" && type.size != 0) {
    return {.exact_bytes = 0, .unit_bytes = type.size};
  }
  return {};
}

}  // namespace detail

/// The identity endpoints of T record in a topic (for a bytes endpoint that
/// carries T: Node::advertise_bytes(topic, type_identity_of<T>())).
template <class T>
TypeIdentity type_identity_of() {
  return Serializer<T>::identity();
}

/// Raw structs: the bytes are the message. Zero copy both ways.
template <detail::RawMessage T>
struct Serializer<T> {
  static constexpr std::string_view kName = "raw";
  static constexpr DataPath kDataPath = DataPath::kZeroCopy;
  static constexpr bool kReadsInPlace = true;
  static constexpr bool kLoansValue = true;  ///< Publisher::loan() gives a T in shared memory.

  static TypeIdentity identity() { return raw_type_identity<T>(); }
  /// A struct described with axon::RawFields<T> (axon/raw_fields.hpp) stores its field description with its
  /// topic, so that tools print its fields; an undescribed one has no schema().
  static std::vector<std::byte> schema() requires DescribedRawStruct<T> { return raw_fields_schema<T>(); }
  static std::size_t encoded_size(const T& /*value*/) noexcept { return sizeof(T); }
  static std::size_t encode(const T& value, std::span<std::byte> out) noexcept {
    std::memcpy(out.data(), &value, sizeof(T));
    return sizeof(T);
  }
  /// The message in place; nullptr when the size is not sizeof(T).
  static const T* view(std::span<const std::byte> in, bool /*verify*/) noexcept {
    return in.size() == sizeof(T) ? std::launder(reinterpret_cast<const T*>(in.data())) : nullptr;
  }
};

}  // namespace axon
