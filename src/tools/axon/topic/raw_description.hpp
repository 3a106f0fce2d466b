// A raw struct's field description as a topic stores it (axon/raw_fields.hpp, written by the topic's first
// described publisher, another process): read back with every count, offset and size checked before it is used,
// and the messages it describes printed as JSON fields.
//
// Thread safety: none needed (functions of their arguments). Allocates.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "axon/detail/raw_fields_format.hpp"
#include "axon/result.hpp"
#include "src/tools/axon/json_writer.hpp"

namespace axon::tools {

/// A checked description: struct 0 is the message. Each field lies within its struct (nested structs included),
/// each kStruct field names a later struct, and printing a message visits at most kMaxPrintedValues values.
struct RawDescription {
  std::vector<detail::raw_fields::StructDescription> structs;
};

/// Values (scalars, strings) one message may print, whatever the description says: fields may overlap, so
/// nesting alone does not bound the work.
inline constexpr std::size_t kMaxPrintedValues = std::size_t{1} << 22;

/// The description in `bytes`; kMalformed, with what is wrong, when any part of it is not a valid description.
[[nodiscard]] Result<RawDescription> decode_raw_description(std::span<const std::byte> bytes);

/// `message` as a JSON object of the described fields (names as registered; arrays as arrays; char arrays as
/// strings up to the first NUL, bytes that are not UTF-8 as U+FFFD). `message` must have the size of struct 0.
void write_raw_message(JsonWriter& json, const RawDescription& description, std::span<const std::byte> message);

}  // namespace axon::tools
