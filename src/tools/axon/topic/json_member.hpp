// Finding one member of a JSON document by a dotted path ("pose.position.x", "objects.0.id"), for
// `axon topic echo --field` and for tests that check what the commands print. It reads JSON the libraries
// wrote (FlatBuffers' and Protobuf's printers) and the commands' own; it does not build a tree.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace axon::tools {

/// The text of the value at `path` in `json`: each dot-separated step names a member of an object, or (a
/// decimal number) an element of an array. Empty path: the whole value. std::nullopt when a step is not
/// there or the text is not JSON (the reason in `why`, when given).
[[nodiscard]] std::optional<std::string_view> json_member(std::string_view json, std::string_view path,
                                                          std::string* why = nullptr);

/// A JSON string's contents with its escapes resolved (\n, \", \uXXXX as UTF-8); `quoted` includes the quotes.
/// std::nullopt when it is not a JSON string.
[[nodiscard]] std::optional<std::string> json_string(std::string_view quoted);

}  // namespace axon::tools
