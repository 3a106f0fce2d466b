// What a topic's messages are: a type name and a hash that processes compare
// before they exchange a single byte.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace axon {

/// Identity of a message type as recorded in a topic.
struct TypeIdentity {
  std::string name;                ///< e.g. "perception::ObjectList"
  std::uint64_t hash = 0;          ///< Covers name, size, alignment and version.
  std::uint32_t size = 0;          ///< sizeof for raw structs.
  std::uint32_t align = 0;         ///< alignof for raw structs.
  std::uint32_t version = 0;       ///< User-supplied layout version.
  std::string serializer = "raw";  ///< Which Serializer encodes it.
};

namespace detail {

template <class T>
constexpr std::string_view compiler_type_name() noexcept {
  // "... [with T = ns::Type; std::string_view = ...]" (g++) or "[T = ns::Type]" (clang).
  std::string_view fn = __PRETTY_FUNCTION__;
  const auto start = fn.find("T = ") + 4;
  const auto end = fn.find_first_of(";]", start);
  return fn.substr(start, end - start);
}

constexpr std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 0xcbf29ce484222325ULL) noexcept {
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace detail

/// Customization point: a message type may declare
///     static constexpr std::string_view kAxonTypeName = "perception::ObjectList";
///     static constexpr std::uint32_t kAxonTypeVersion = 2;
/// to give a stable name (the default is the compiler's spelling) and a
/// version to bump when its layout changes meaning without changing size.
template <class T>
constexpr std::string_view message_type_name() noexcept {
  if constexpr (requires { T::kAxonTypeName; }) {
    return T::kAxonTypeName;
  } else {
    return detail::compiler_type_name<T>();
  }
}

template <class T>
constexpr std::uint32_t message_type_version() noexcept {
  if constexpr (requires { T::kAxonTypeVersion; }) {
    return T::kAxonTypeVersion;
  } else {
    return 0;
  }
}

/// Identity of a raw (trivially copyable) struct: its bytes are the message.
template <class T>
TypeIdentity raw_type_identity() {
  static_assert(std::is_trivially_copyable_v<T>,
                "axon raw messages must be trivially copyable (no pointers, std::string or "
                "std::vector inside): use a fixed-size struct, or a FlatBuffers/Protobuf type");
  TypeIdentity id;
  id.name = std::string(message_type_name<T>());
  id.size = sizeof(T);
  id.align = alignof(T);
  id.version = message_type_version<T>();
  std::uint64_t h = detail::fnv1a("raw:");
  h = detail::fnv1a(id.name, h);
  h = detail::fnv1a(std::to_string(id.size) + "/" + std::to_string(id.align) + "/" + std::to_string(id.version), h);
  id.hash = h;
  return id;
}

/// Identity of a slice of E (axon::Slice<E>, <axon/slice.hpp>): the element
/// type's name, size, alignment and version, under serializer "slice", so a
/// slice of another element type (or a raw E) never joins the topic. `size`
/// and `align` are the element's.
template <class E>
TypeIdentity slice_type_identity() {
  static_assert(std::is_trivially_copyable_v<E>, "axon slice elements must be trivially copyable");
  TypeIdentity id;
  id.name = "axon::Slice<" + std::string(message_type_name<E>()) + ">";
  id.size = sizeof(E);
  id.align = alignof(E);
  id.version = message_type_version<E>();
  id.serializer = "slice";
  std::uint64_t h = detail::fnv1a("slice:");
  h = detail::fnv1a(message_type_name<E>(), h);
  h = detail::fnv1a(std::to_string(id.size) + "/" + std::to_string(id.align) + "/" + std::to_string(id.version), h);
  id.hash = h;
  return id;
}

/// Identity of an untyped bytes topic (axon::Bytes declared by itself,
/// <axon/bytes.hpp>): only bytes endpoints of that identity join it.
inline TypeIdentity bytes_type_identity() {
  TypeIdentity id;
  id.name = "axon::Bytes";
  id.size = 1;
  id.align = 1;
  id.serializer = "bytes";
  id.hash = detail::fnv1a("axon::Bytes", detail::fnv1a("bytes:"));
  return id;
}

}  // namespace axon
