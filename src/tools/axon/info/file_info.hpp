// What `axon info` says about one MCAP file (docs/tools.md, "axon info"): its header, time span, message counts
// per channel, schemas, chunk compression and whether it has a summary. A file without summary (its writer was
// killed) is described from its data section: the reader scans it up to the last complete record and every
// complete chunk is read to count its messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "axon/result.hpp"
#include "src/tools/mcap/records.hpp"

namespace axon::tools {

/// The axon type identity a channel's metadata carries (docs/tools.md, "axon info": the axon.* keys `axon record`
/// writes). A number that is missing or not decimal is empty (and FileInfo::notes says which).
struct AxonIdentity {
  std::string type_name;
  std::string type_hash;   ///< 16 lowercase hex digits, as written.
  std::string serializer;  ///< flatbuffers, protobuf or raw.
  std::optional<std::uint64_t> type_size;
  std::optional<std::uint64_t> type_align;
  std::optional<std::uint64_t> type_version;
  std::optional<std::uint64_t> max_payload_bytes;
  std::string publisher_nodes;  ///< Recorder only; "" when absent.
  std::string qos;              ///< Recorder only; "" when absent.
};

struct ChannelInfo {
  std::uint16_t id = 0;
  std::string topic;
  std::string message_encoding;
  std::uint16_t schema_id = 0;  ///< 0: no schema.
  std::string schema_name;      ///< "" without schema.
  std::string schema_encoding;  ///< "" without schema.
  std::uint64_t message_count = 0;
  mcap::StringMap metadata;
  std::optional<AxonIdentity> axon;  ///< When the metadata names an axon type (axon.type_name).
};

struct SchemaInfo {
  std::uint16_t id = 0;
  std::string name;
  std::string encoding;
  std::uint64_t data_bytes = 0;
};

/// The chunks of one compression ("none", "lz4", "zstd" or what the file names).
struct CompressionInfo {
  std::string name;
  std::uint64_t chunks = 0;
  std::uint64_t compressed_bytes = 0;
  std::uint64_t uncompressed_bytes = 0;
};

struct FileInfo {
  std::string path;
  std::uint64_t file_bytes = 0;
  std::string library;
  std::string profile;
  /// The summary section was read. false: the data section was scanned (summary_note says why and where it
  /// stopped) and the counts come from its complete chunks.
  bool has_summary = false;
  std::string summary_note;
  std::uint64_t message_count = 0;
  /// Log times of the first and last message, ns since the Unix epoch; empty without messages.
  std::optional<std::uint64_t> start_ns;
  std::optional<std::uint64_t> end_ns;
  std::vector<ChannelInfo> channels;  ///< By id.
  std::vector<SchemaInfo> schemas;    ///< By id.
  std::vector<CompressionInfo> compressions;
  std::uint64_t chunk_count = 0;
  std::uint64_t metadata_count = 0;
  std::uint64_t attachment_count = 0;
  /// What could not be read or understood (a corrupt chunk, a malformed axon.* value), in the user's words.
  std::vector<std::string> notes;
};

/// Reads `path`. An error when it cannot be opened or is no MCAP file; a file cut short is described as far as
/// it can be read.
[[nodiscard]] Result<FileInfo> read_file_info(const std::string& path);

/// last - first log time in seconds; 0 without messages.
[[nodiscard]] double duration_s(const FileInfo& info) noexcept;
/// The channel's messages per second over the file's duration; empty when the duration is 0.
[[nodiscard]] std::optional<double> rate_hz(const FileInfo& info, const ChannelInfo& channel) noexcept;

}  // namespace axon::tools
