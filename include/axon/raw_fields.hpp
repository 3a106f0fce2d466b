// A raw struct's field description, for tools: opt in by specializing axon::RawFields<T>, and `axon topic echo`
// prints the struct's messages as JSON fields instead of hex (docs/design/schemas.md, "Raw structs described").
//
//     struct Pose { double x, y; std::uint32_t sequence; char frame[16]; };
//     template <> struct axon::RawFields<Pose> {
//       static constexpr auto kFields = std::tuple{axon::raw_field("x", &Pose::x), axon::raw_field("y", &Pose::y),
//                                                  axon::raw_field("sequence", &Pose::sequence),
//                                                  axon::raw_field("frame", &Pose::frame)};
//     };
//
// A field is a member pointer with the name tools print; axon derives its offset, kind and element count. Fields
// may be bool, char (arrays print as a string up to the first NUL), signed and unsigned integers of 1 to 8 bytes,
// enums (as their underlying integer), float and double, one-dimensional C arrays and std::arrays of those, and
// structs (or arrays of structs) that have a RawFields of their own. List any subset, in any order: members left
// out (padding, reserved words) are not printed. Everything but the offsets is checked at compile time: the
// member belongs to T, the names are identifiers and distinct, each field's type is one of the above, and the
// description stays within the bounds a topic stores (raw_fields_format.hpp).
//
// The description is not part of the type's identity: publishers with and without one join the same topic, and
// the first publisher that has one stores it with the topic.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "axon/detail/raw_fields_format.hpp"
#include "axon/transport.hpp"
#include "axon/type_identity.hpp"

namespace axon {

/// One described member of `Class`: the name tools print, and the member.
template <class Class, class Member>
struct RawField {
  std::string_view name;
  Member Class::*member;
};

/// A field of a RawFields description: raw_field("x", &Pose::x).
template <class Class, class Member>
constexpr RawField<Class, Member> raw_field(std::string_view name, Member Class::*member) noexcept {
  return {name, member};
}

/// Specialize for a raw struct T with `static constexpr auto kFields = std::tuple{raw_field(...), ...};`.
template <class T>
struct RawFields {};

/// T has a field description.
template <class T>
concept DescribedRawStruct = std::is_class_v<T> && requires {
  RawFields<T>::kFields;
};

namespace detail::raw_fields {

template <class M>
struct ArrayShape {
  using Element = M;
  static constexpr bool kArray = false;
  static constexpr std::size_t kCount = 1;
};
template <class E, std::size_t N>
struct ArrayShape<E[N]> {
  using Element = E;
  static constexpr bool kArray = true;
  static constexpr std::size_t kCount = N;
};
template <class E, std::size_t N>
struct ArrayShape<std::array<E, N>> {
  using Element = E;
  static constexpr bool kArray = true;
  static constexpr std::size_t kCount = N;
};

template <class>
inline constexpr bool kUnsupported = false;

/// The kind of a field's element type; a type the format cannot print does not compile.
template <class E>
constexpr Kind kind_of() noexcept {
  if constexpr (std::is_enum_v<E>) {
    return kind_of<std::underlying_type_t<E>>();
  } else if constexpr (std::is_same_v<E, bool>) {
    return Kind::kBool;
  } else if constexpr (std::is_same_v<E, char>) {
    return Kind::kChar;
  } else if constexpr (std::is_integral_v<E> && sizeof(E) <= 8) {
    constexpr Kind kSigned[] = {Kind::kInt8, Kind::kInt16, Kind::kInt32, Kind::kInt64};
    constexpr Kind kUnsigned[] = {Kind::kUint8, Kind::kUint16, Kind::kUint32, Kind::kUint64};
    constexpr std::size_t kLog2 = sizeof(E) == 1 ? 0 : sizeof(E) == 2 ? 1 : sizeof(E) == 4 ? 2 : 3;
    return std::is_signed_v<E> ? kSigned[kLog2] : kUnsigned[kLog2];
  } else if constexpr (std::is_same_v<E, float>) {
    return Kind::kFloat32;
  } else if constexpr (std::is_same_v<E, double>) {
    return Kind::kFloat64;
  } else if constexpr (DescribedRawStruct<E>) {
    return Kind::kStruct;
  } else {
    static_assert(kUnsupported<E>,
                  "axon::RawFields: a field's type is not one tools can print: use bool, char, a signed or unsigned "
                  "integer, an enum, float, double, a one-dimensional array of those, or a struct that has an "
                  "axon::RawFields<> of its own (a 2-D array: make its rows a described struct)");
    return Kind::kUint8;
  }
}

/// Structs a description of T holds: T and each nested struct, counted per use.
template <class T>
constexpr std::size_t struct_count() noexcept {
  return std::apply(
      [](const auto&... field) {
        std::size_t count = 1;
        (
            [&]<class C, class M>(const RawField<C, M>&) {
              using Element = typename ArrayShape<M>::Element;
              if constexpr (kind_of<Element>() == Kind::kStruct) {
                count += struct_count<Element>();
              }
            }(field),
            ...);
        return count;
      },
      RawFields<T>::kFields);
}

/// Bytes of T's structs in the description (encode()'s layout): each struct's size, name and field count, then
/// per field its name and 13 bytes, nested structs after.
template <class T>
constexpr std::size_t encoded_struct_bytes() noexcept {
  return std::apply(
      [](const auto&... field) {
        std::size_t bytes = 4 + 2 + message_type_name<T>().size() + 2;
        (
            [&]<class C, class M>(const RawField<C, M>& f) {
              using Element = typename ArrayShape<M>::Element;
              bytes += 13 + f.name.size();
              if constexpr (kind_of<Element>() == Kind::kStruct) {
                bytes += encoded_struct_bytes<Element>();
              }
            }(field),
            ...);
        return bytes;
      },
      RawFields<T>::kFields);
}

/// The names are identifiers, none twice.
template <class T>
constexpr bool names_valid_and_distinct() noexcept {
  return std::apply(
      [](const auto&... field) {
        const std::array<std::string_view, sizeof...(field)> names{field.name...};
        for (std::size_t i = 0; i < names.size(); ++i) {
          if (!valid_field_name(names[i])) {
            return false;
          }
          for (std::size_t j = 0; j < i; ++j) {
            if (names[i] == names[j]) {
              return false;
            }
          }
        }
        return true;
      },
      RawFields<T>::kFields);
}

/// Checks what the compiler can; the first failing assertion names the mistake.
template <class T>
constexpr bool check_description() noexcept {
  static_assert(std::is_trivially_copyable_v<T>, "axon::RawFields: a described struct must be trivially copyable");
  static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(RawFields<T>::kFields)>> >= 1,
                "axon::RawFields: kFields lists no field");
  static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(RawFields<T>::kFields)>> <= kMaxFieldsPerStruct,
                "axon::RawFields: more fields than a description holds (kMaxFieldsPerStruct)");
  static_assert(names_valid_and_distinct<T>(),
                "axon::RawFields: each field name must be an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 64 "
                "characters: `axon topic echo --field a.b` names it) and appear once");
  static_assert(message_type_name<T>().size() <= kMaxTypeNameBytes,
                "axon::RawFields: the struct's type name is longer than a description holds: give it a shorter "
                "kAxonTypeName");
  static_assert(struct_count<T>() <= kMaxStructs,
                "axon::RawFields: more nested structs than a description holds (kMaxStructs, each use counted)");
  return true;
}

/// `member`'s offset in T. Runs: a member pointer's offset is not a constant expression. The storage holds a T
/// (C++20 creates objects of implicit-lifetime types, as every trivially copyable class is, in byte arrays).
template <class T, class C, class M>
std::uint32_t offset_of(M C::*member) noexcept {
  alignas(T) std::byte storage[sizeof(T)]{};
  const C& object = *reinterpret_cast<const T*>(storage);
  const auto* at = reinterpret_cast<const std::byte*>(std::addressof(object.*member));
  return static_cast<std::uint32_t>(at - storage);
}

/// Appends T's description (and, after it, those of its nested structs) to `structs`; returns T's index.
template <class T>
std::uint16_t describe_struct(std::vector<StructDescription>& structs) {
  static_assert(check_description<T>());
  const auto index = static_cast<std::uint16_t>(structs.size());
  structs.push_back(StructDescription{.type_name = std::string(message_type_name<T>()),
                                      .size_bytes = static_cast<std::uint32_t>(sizeof(T)),
                                      .fields = {}});
  std::apply(
      [&](const auto&... field) {
        (
            [&]<class C, class M>(const RawField<C, M>& f) {
              static_assert(std::is_base_of_v<C, T>,
                            "axon::RawFields<T>: a field names a member of another struct than T");
              using Shape = ArrayShape<M>;
              using Element = typename Shape::Element;
              static_assert(!std::is_array_v<Element>,
                            "axon::RawFields: 2-D arrays are not described: make the rows a described struct");
              static_assert(Shape::kCount <= kMaxElements, "axon::RawFields: an array field has too many elements");
              constexpr Kind kKind = kind_of<Element>();
              FieldDescription out{.name = std::string(f.name),
                                   .kind = kKind,
                                   .array = Shape::kArray,
                                   .offset = offset_of<T>(f.member),
                                   .count = static_cast<std::uint32_t>(Shape::kCount),
                                   .struct_index = 0};
              if constexpr (kKind == Kind::kStruct) {
                out.struct_index = describe_struct<Element>(structs);
              }
              structs[index].fields.push_back(std::move(out));
            }(field),
            ...);
      },
      RawFields<T>::kFields);
  return index;
}

}  // namespace detail::raw_fields

/// T's field description as its topic stores it (what Serializer<T>::schema() returns for a described raw
/// struct). Slow path: allocates.
template <DescribedRawStruct T>
std::vector<std::byte> raw_fields_schema() {
  static_assert(
      detail::raw_fields::kMagic.size() + 2 + detail::raw_fields::encoded_struct_bytes<T>() <= kMaxSchemaBytes,
      "axon::RawFields: the description is larger than a topic stores (kMaxSchemaBytes): describe fewer "
      "fields or nested structs");
  std::vector<detail::raw_fields::StructDescription> structs;
  (void)detail::raw_fields::describe_struct<T>(structs);
  return detail::raw_fields::encode(structs);
}

}  // namespace axon
