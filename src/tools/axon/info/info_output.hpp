// How `axon info` prints a file: text in the shape of `mcap info`, or members of its JSON document.
#pragma once

#include <cstdint>
#include <string>

#include "src/tools/axon/info/file_info.hpp"
#include "src/tools/axon/json_writer.hpp"

namespace axon::tools {

/// The file as text: header lines, then channels, axon types, schemas and compression; ends in '\n'.
[[nodiscard]] std::string info_text(const FileInfo& info);

/// The file as one JSON object (opens and closes it) at the writer's current position.
void write_info_json(JsonWriter& json, const FileInfo& info);

/// `ns` since the Unix epoch in UTC: "2023-11-14T22:13:20.000000000Z".
[[nodiscard]] std::string utc_text(std::uint64_t ns);

/// What a file without summary should be told: "axon record --recover FILE" rebuilds one.
[[nodiscard]] std::string recover_hint(const std::string& path);

}  // namespace axon::tools
