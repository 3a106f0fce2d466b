#include "src/tools/axon/topic/raw_description.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace axon::tools {
namespace {

namespace raw = detail::raw_fields;
using raw::FieldDescription;
using raw::Kind;
using raw::StructDescription;

Error damaged(const std::string& what) {
  return {ErrorCode::kMalformed,
          "its raw field description is damaged: " + what + "; restart the topic's publishers to store it again"};
}

/// Reads the description front to back; every read checks that the bytes are there.
class Reader {
 public:
  explicit Reader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  [[nodiscard]] bool has(std::size_t n) const noexcept { return n <= bytes_.size() - at_; }
  [[nodiscard]] std::size_t at() const noexcept { return at_; }
  [[nodiscard]] std::size_t left() const noexcept { return bytes_.size() - at_; }

  /// false when fewer than `n` bytes are left.
  bool uint(std::size_t n, std::uint64_t& out) noexcept {
    if (!has(n)) {
      return false;
    }
    out = 0;
    for (std::size_t i = 0; i < n; ++i) {
      out |= std::uint64_t{static_cast<std::uint8_t>(bytes_[at_ + i])} << (8 * i);
    }
    at_ += n;
    return true;
  }
  bool text(std::size_t n, std::string& out) {
    if (!has(n)) {
      return false;
    }
    out.assign(reinterpret_cast<const char*>(bytes_.data() + at_), n);
    at_ += n;
    return true;
  }

 private:
  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
};

Error ends_early(const Reader& in, std::size_t total) {
  return damaged(fmt::format("it ends early, at byte {} of {}", in.at(), total));
}

/// Reads one field of struct `index` (`count` structs in all) and checks what does not need the later structs.
Result<FieldDescription> read_field(Reader& in, std::size_t total, const StructDescription& owner, std::size_t index,
                                    std::size_t count) {
  std::uint64_t name_bytes = 0;
  std::uint64_t kind = 0;
  std::uint64_t flags = 0;
  std::uint64_t offset = 0;
  std::uint64_t elements = 0;
  std::uint64_t struct_index = 0;
  FieldDescription field;
  if (!in.uint(1, name_bytes) || !in.text(name_bytes, field.name) || !in.uint(1, kind) || !in.uint(1, flags) ||
      !in.uint(4, offset) || !in.uint(4, elements) || !in.uint(2, struct_index)) {
    return ends_early(in, total);
  }
  const std::string where = fmt::format("field '{}' of '{}'", field.name, owner.type_name);
  if (!raw::valid_field_name(field.name)) {
    return damaged(fmt::format("a field of '{}' has the name '{}', which is not an identifier of at most {} bytes",
                               owner.type_name, field.name, raw::kMaxFieldNameBytes));
  }
  if (kind == 0 || kind > raw::kLastKind) {
    return damaged(fmt::format("{} has the unknown kind {}", where, kind));
  }
  if ((flags & ~std::uint64_t{raw::kKnownFlags}) != 0) {
    return damaged(fmt::format("{} has unknown flags 0x{:02x}", where, flags));
  }
  field.kind = static_cast<Kind>(kind);
  field.array = (flags & raw::kFlagArray) != 0;
  if (elements == 0 || elements > raw::kMaxElements || (!field.array && elements != 1)) {
    return damaged(fmt::format("{} has {} elements ({}: 1 to {} for an array, 1 otherwise)", where, elements,
                               field.array ? "an array" : "not an array", raw::kMaxElements));
  }
  if (field.kind == Kind::kStruct ? struct_index <= index || struct_index >= count : struct_index != 0) {
    return damaged(fmt::format("{} names struct {} of {} (a nested struct comes after the one that holds it)", where,
                               struct_index, count));
  }
  field.offset = static_cast<std::uint32_t>(offset);
  field.count = static_cast<std::uint32_t>(elements);
  field.struct_index = static_cast<std::uint16_t>(struct_index);
  return field;
}

Result<StructDescription> read_struct(Reader& in, std::size_t total, std::size_t index, std::size_t count) {
  std::uint64_t size_bytes = 0;
  std::uint64_t name_bytes = 0;
  std::uint64_t field_count = 0;
  StructDescription out;
  if (!in.uint(4, size_bytes) || !in.uint(2, name_bytes)) {
    return ends_early(in, total);
  }
  if (name_bytes == 0 || name_bytes > raw::kMaxTypeNameBytes) {
    return damaged(
        fmt::format("struct {} has a type name of {} bytes (1 to {})", index, name_bytes, raw::kMaxTypeNameBytes));
  }
  if (!in.text(name_bytes, out.type_name) || !in.uint(2, field_count)) {
    return ends_early(in, total);
  }
  if (size_bytes == 0) {
    return damaged(fmt::format("struct '{}' has a size of 0 bytes", out.type_name));
  }
  if (field_count == 0 || field_count > raw::kMaxFieldsPerStruct) {
    return damaged(
        fmt::format("struct '{}' has {} fields (1 to {})", out.type_name, field_count, raw::kMaxFieldsPerStruct));
  }
  out.size_bytes = static_cast<std::uint32_t>(size_bytes);
  for (std::uint64_t f = 0; f < field_count; ++f) {
    auto field = read_field(in, total, out, index, count);
    if (!field) {
      return field.error();
    }
    const bool twice = std::any_of(out.fields.begin(), out.fields.end(),
                                   [&](const FieldDescription& seen) { return seen.name == field->name; });
    if (twice) {
      return damaged(fmt::format("struct '{}' has two fields named '{}'", out.type_name, field->name));
    }
    out.fields.push_back(std::move(*field));
  }
  return out;
}

/// Each field within its struct, and what printing one message costs: from the last struct to the first (a
/// field names only later structs, whose cost is known by then).
Result<void> check_extents(const std::vector<StructDescription>& structs) {
  std::vector<std::uint64_t> values(structs.size(), 0);
  for (std::size_t s = structs.size(); s-- > 0;) {
    const StructDescription& owner = structs[s];
    for (const FieldDescription& f : owner.fields) {
      const bool nested = f.kind == Kind::kStruct;
      const std::uint64_t element = nested ? structs[f.struct_index].size_bytes : raw::element_bytes(f.kind);
      const std::uint64_t end = std::uint64_t{f.offset} + element * f.count;  // < 2^53: 2^32 * 2^20 + 2^32
      if (end > owner.size_bytes) {
        return damaged(fmt::format("field '{}' of '{}' ends at byte {}, past the struct's {} bytes", f.name,
                                   owner.type_name, end, owner.size_bytes));
      }
      // A char field is one value; the sum saturates at the bound (each term is at most 2^20 * 2^22).
      const std::uint64_t each = nested ? values[f.struct_index] : 1;
      values[s] =
          std::min<std::uint64_t>(values[s] + (f.kind == Kind::kChar ? 1 : f.count * each), kMaxPrintedValues + 1);
    }
  }
  if (values[0] > kMaxPrintedValues) {
    return damaged(fmt::format("a message would print more than {} values", kMaxPrintedValues));
  }
  return {};
}

template <class V>
V load(const std::byte* at) noexcept {
  V value;
  std::memcpy(&value, at, sizeof(V));  // unaligned: a field of a packed struct may be
  return value;
}

/// `text` with every byte that is not part of valid UTF-8 replaced by U+FFFD, so the JSON stays UTF-8.
std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = lead < 0x80           ? 1
                         : (lead >> 5) == 0x6  ? 2
                         : (lead >> 4) == 0xE  ? 3
                         : (lead >> 3) == 0x1E ? 4
                                               : 0;
    bool valid = length != 0 && i + length <= text.size() && !(length == 2 && lead < 0xC2) && lead <= 0xF4;
    for (std::size_t k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    }
    if (valid && length >= 3) {  // overlong forms, surrogates and code points past U+10FFFF
      const auto second = static_cast<unsigned char>(text[i + 1]);
      valid = !(lead == 0xE0 && second < 0xA0) && !(lead == 0xED && second >= 0xA0) &&
              !(lead == 0xF0 && second < 0x90) && !(lead == 0xF4 && second >= 0x90);
    }
    if (valid) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

void write_scalar(JsonWriter& json, Kind kind, const std::byte* at) {
  switch (kind) {
    case Kind::kBool: json.value(load<std::uint8_t>(at) != 0); return;
    case Kind::kInt8: json.value(load<std::int8_t>(at)); return;
    case Kind::kInt16: json.value(load<std::int16_t>(at)); return;
    case Kind::kInt32: json.value(load<std::int32_t>(at)); return;
    case Kind::kInt64: json.value(load<std::int64_t>(at)); return;
    case Kind::kUint8: json.value(load<std::uint8_t>(at)); return;
    case Kind::kUint16: json.value(load<std::uint16_t>(at)); return;
    case Kind::kUint32: json.value(load<std::uint32_t>(at)); return;
    case Kind::kUint64: json.value(load<std::uint64_t>(at)); return;
    case Kind::kFloat32: json.value(load<float>(at)); return;
    case Kind::kFloat64: json.value(load<double>(at)); return;
    case Kind::kChar:
    case Kind::kStruct: break;  // not scalars: write_field() prints them
  }
  json.null_value();
}

void write_struct(JsonWriter& json, const RawDescription& description, std::size_t index, const std::byte* base);

void write_field(JsonWriter& json, const RawDescription& description, const FieldDescription& field,
                 const std::byte* base) {
  const std::byte* at = base + field.offset;
  if (field.kind == Kind::kChar) {
    const auto* chars = reinterpret_cast<const char*>(at);
    json.value(valid_utf8(std::string_view(chars, ::strnlen(chars, field.count))));
    return;
  }
  const bool nested = field.kind == Kind::kStruct;
  const std::size_t stride =
      nested ? description.structs[field.struct_index].size_bytes : raw::element_bytes(field.kind);
  const auto element = [&](std::size_t i) {
    if (nested) {
      write_struct(json, description, field.struct_index, at + i * stride);
    } else {
      write_scalar(json, field.kind, at + i * stride);
    }
  };
  if (!field.array) {
    element(0);
    return;
  }
  json.begin_array();
  for (std::size_t i = 0; i < field.count; ++i) {
    element(i);
  }
  json.end_array();
}

void write_struct(JsonWriter& json, const RawDescription& description, std::size_t index, const std::byte* base) {
  json.begin_object();
  for (const FieldDescription& field : description.structs[index].fields) {
    json.key(field.name);
    write_field(json, description, field, base);
  }
  json.end_object();
}

}  // namespace

Result<RawDescription> decode_raw_description(std::span<const std::byte> bytes) {
  Reader in(bytes);
  std::string magic;
  if (!in.text(raw::kMagic.size(), magic) || magic != raw::kMagic) {
    return damaged("it does not start with the format's magic \"AXRAWF1\" (a publisher of another axon version?)");
  }
  std::uint64_t count = 0;
  if (!in.uint(2, count)) {
    return ends_early(in, bytes.size());
  }
  if (count == 0 || count > raw::kMaxStructs) {
    return damaged(fmt::format("it holds {} structs (1 to {})", count, raw::kMaxStructs));
  }
  RawDescription out;
  for (std::size_t s = 0; s < count; ++s) {
    auto described = read_struct(in, bytes.size(), s, count);
    if (!described) {
      return described.error();
    }
    out.structs.push_back(std::move(*described));
  }
  if (in.left() != 0) {
    return damaged(fmt::format("{} bytes follow its last struct", in.left()));
  }
  if (auto fits = check_extents(out.structs); !fits) {
    return fits.error();
  }
  return out;
}

void write_raw_message(JsonWriter& json, const RawDescription& description, std::span<const std::byte> message) {
  // The caller's promise, checked anyway: every offset was checked against struct 0's size only.
  if (description.structs.empty() || message.size() != description.structs[0].size_bytes) {
    json.null_value();
    return;
  }
  write_struct(json, description, 0, message.data());
}

}  // namespace axon::tools
