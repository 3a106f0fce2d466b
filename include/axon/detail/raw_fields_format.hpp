// The bytes of a raw struct's field description (axon/raw_fields.hpp), as a publisher stores it in its topic's
// schema file and a tool reads it back (docs/design/schemas.md, "Raw structs described"). Users do not write
// these: axon::RawFields<T> does. Here are the format's words, its bounds and its encoder; the reader, which
// checks all of it before use, is the tools' (src/tools/axon/topic/raw_description.cpp).
//
// Layout, integers little-endian:
//   "AXRAWF1\0"                       magic, with the format's version
//   u16 struct_count                  1..kMaxStructs; struct 0 is the message itself
//   per struct: u32 size_bytes, u16 name_bytes, name, u16 field_count,
//     per field: u8 name_bytes, name, u8 kind, u8 flags, u32 offset, u32 count, u16 struct_index
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace axon::detail::raw_fields {

inline constexpr std::string_view kMagic{"AXRAWF1\0", 8};

/// What one field holds. The numbers are the format's: never renumber.
enum class Kind : std::uint8_t {
  kBool = 1,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kFloat32,
  kFloat64,
  kChar,    ///< `count` chars printed as one string, up to the first NUL.
  kStruct,  ///< `count` structs described by struct_index.
};
inline constexpr std::uint8_t kLastKind = static_cast<std::uint8_t>(Kind::kStruct);

/// Field flags.
inline constexpr std::uint8_t kFlagArray = 1;  ///< A fixed array of `count` elements (printed as a JSON array).
inline constexpr std::uint8_t kKnownFlags = kFlagArray;

/// Bounds the encoder meets at compile time and the reader enforces.
inline constexpr std::size_t kMaxStructs = 64;  ///< The message and every nested struct, each use counted.
inline constexpr std::size_t kMaxFieldsPerStruct = 256;
inline constexpr std::size_t kMaxFieldNameBytes = 64;
inline constexpr std::size_t kMaxTypeNameBytes = 256;
inline constexpr std::size_t kMaxElements = 1u << 20;  ///< Elements of one array field.

/// Bytes of one element of `kind`; 0 for kStruct (its struct's size) and unknown kinds.
constexpr std::uint32_t element_bytes(Kind kind) noexcept {
  switch (kind) {
    case Kind::kBool:
    case Kind::kInt8:
    case Kind::kUint8:
    case Kind::kChar: return 1;
    case Kind::kInt16:
    case Kind::kUint16: return 2;
    case Kind::kInt32:
    case Kind::kUint32:
    case Kind::kFloat32: return 4;
    case Kind::kInt64:
    case Kind::kUint64:
    case Kind::kFloat64: return 8;
    case Kind::kStruct: return 0;
  }
  return 0;
}

/// A field name tools can print and `--field a.b` can name: an identifier of at most kMaxFieldNameBytes.
constexpr bool valid_field_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > kMaxFieldNameBytes) {
    return false;
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) {
      return false;
    }
  }
  return true;
}

struct FieldDescription {
  std::string name;
  Kind kind = Kind::kUint8;
  bool array = false;
  std::uint32_t offset = 0;        ///< Bytes from the start of its struct.
  std::uint32_t count = 1;         ///< Elements (chars of a kChar field).
  std::uint16_t struct_index = 0;  ///< kStruct: the struct that describes each element (after this one).
};

struct StructDescription {
  std::string type_name;
  std::uint32_t size_bytes = 0;
  std::vector<FieldDescription> fields;
};

/// The description's bytes. Writes what it is given: the encoder's callers (raw_fields.hpp) meet the bounds,
/// and the reader's tests hand it broken descriptions on purpose.
inline std::vector<std::byte> encode(const std::vector<StructDescription>& structs) {
  std::vector<std::byte> out;
  const auto put = [&out](std::uint64_t value, std::size_t bytes) {
    for (std::size_t i = 0; i < bytes; ++i) {
      out.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xFF));
    }
  };
  const auto put_text = [&out](std::string_view text) {
    for (const char c : text) {
      out.push_back(static_cast<std::byte>(c));
    }
  };
  put_text(kMagic);
  put(structs.size(), 2);
  for (const StructDescription& s : structs) {
    put(s.size_bytes, 4);
    put(s.type_name.size(), 2);
    put_text(s.type_name);
    put(s.fields.size(), 2);
    for (const FieldDescription& f : s.fields) {
      put(f.name.size(), 1);
      put_text(f.name);
      put(static_cast<std::uint8_t>(f.kind), 1);
      put(f.array ? kFlagArray : 0, 1);
      put(f.offset, 4);
      put(f.count, 4);
      put(f.struct_index, 2);
    }
  }
  return out;
}

}  // namespace axon::detail::raw_fields
