// Reads what `axon info` shows of an MCAP file (file_info.hpp).
#include "src/tools/axon/info/file_info.hpp"

#include <algorithm>
#include <charconv>
#include <memory>
#include <utility>

#include "src/tools/mcap/reader.hpp"

namespace axon::tools {
namespace {

const std::string* find_value(const mcap::StringMap& map, std::string_view key) {
  for (const auto& [k, v] : map) {
    if (k == key) {
      return &v;
    }
  }
  return nullptr;
}

/// A decimal metadata value; empty (with a note) when it is missing or not a decimal number.
std::optional<std::uint64_t> decimal_value(const ChannelInfo& channel, std::string_view key,
                                           std::vector<std::string>& notes) {
  const std::string* text = find_value(channel.metadata, key);
  std::uint64_t value = 0;
  if (text != nullptr) {
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec == std::errc() && end == text->data() + text->size() && !text->empty()) {
      return value;
    }
  }
  notes.push_back("channel '" + channel.topic + "': " + std::string(key) +
                  (text == nullptr ? " is missing" : " is '" + *text + "', not a decimal number"));
  return std::nullopt;
}

/// The axon identity of a channel whose metadata names an axon type (axon.type_name); others have none.
std::optional<AxonIdentity> axon_identity(const ChannelInfo& channel, std::vector<std::string>& notes) {
  const std::string* type_name = find_value(channel.metadata, "axon.type_name");
  if (type_name == nullptr) {
    return std::nullopt;
  }
  const auto text = [&](std::string_view key, bool required) {
    const std::string* value = find_value(channel.metadata, key);
    if (value == nullptr && required) {
      notes.push_back("channel '" + channel.topic + "': " + std::string(key) + " is missing");
    }
    return value == nullptr ? std::string() : *value;
  };
  AxonIdentity identity{.type_name = *type_name,
                        .type_hash = text("axon.type_hash", true),
                        .serializer = text("axon.serializer", true),
                        .type_size = decimal_value(channel, "axon.type_size", notes),
                        .type_align = decimal_value(channel, "axon.type_align", notes),
                        .type_version = decimal_value(channel, "axon.type_version", notes),
                        .max_payload_bytes = decimal_value(channel, "axon.max_payload_bytes", notes),
                        .publisher_nodes = text("axon.publisher_nodes", false),
                        .qos = text("axon.qos", false)};
  return identity;
}

/// Counts every complete chunk's messages per channel, with the first and last log time (files without
/// summary, or with a summary that has no statistics). A chunk that cannot be read is a note.
void count_messages(mcap::Reader& reader, FileInfo& info, std::vector<std::uint64_t>& counts) {
  // The reader adds channels it finds inside chunks to its summary while loading: copy the indexes first.
  const std::vector<mcap::ChunkIndex> chunks = reader.summary().chunk_indexes;
  for (const mcap::ChunkIndex& index : chunks) {
    auto loaded = reader.load_chunk(index);
    if (!loaded.ok()) {
      info.notes.push_back("the chunk at offset " + std::to_string(index.chunk_start_offset) +
                           " cannot be read, its messages are not counted: " + std::string(loaded.error().message()));
      continue;
    }
    for (const auto& [log_time, offset] : loaded->messages) {
      auto record = mcap::next_record(loaded->records, offset);
      auto message = record.ok() ? mcap::decode_message(record->content) : Result<mcap::Message>(record.error());
      if (!message.ok()) {
        continue;  // load_chunk() decoded it already
      }
      const std::uint16_t channel = message->header.channel_id;
      if (counts.size() <= channel) {
        counts.resize(std::size_t{channel} + 1);
      }
      ++counts[channel];
      ++info.message_count;
      info.start_ns = std::min(info.start_ns.value_or(log_time), log_time);
      info.end_ns = std::max(info.end_ns.value_or(log_time), log_time);
    }
  }
}

void add_compressions(const mcap::Summary& summary, FileInfo& info) {
  for (const mcap::ChunkIndex& index : summary.chunk_indexes) {
    const std::string name = index.compression.empty() ? "none" : index.compression;
    auto it = std::find_if(info.compressions.begin(), info.compressions.end(),
                           [&](const CompressionInfo& c) { return c.name == name; });
    if (it == info.compressions.end()) {
      info.compressions.push_back({.name = name, .chunks = 0, .compressed_bytes = 0, .uncompressed_bytes = 0});
      it = info.compressions.end() - 1;
    }
    ++it->chunks;
    it->compressed_bytes += index.compressed_size;
    it->uncompressed_bytes += index.uncompressed_size;
  }
}

}  // namespace

Result<FileInfo> read_file_info(const std::string& path) {
  auto reader = mcap::Reader::open(path);
  if (!reader.ok()) {
    return reader.error();
  }
  mcap::Reader& r = **reader;
  FileInfo info;
  info.path = path;
  info.file_bytes = r.file_bytes();
  info.library = r.header().library;
  info.profile = r.header().profile;
  info.has_summary = r.summary_used();
  info.summary_note = r.scan_note();

  // Counts: the summary's statistics when it has them (a summary without a Statistics record leaves the
  // message count 0 while naming chunks); else every complete chunk is read.
  const mcap::Statistics& stats = r.summary().statistics;
  std::vector<std::uint64_t> counts;
  if (info.has_summary && (stats.message_count > 0 || r.summary().chunk_indexes.empty())) {
    info.message_count = stats.message_count;
    if (stats.message_count > 0) {
      info.start_ns = stats.message_start_time;
      info.end_ns = stats.message_end_time;
    }
    for (const auto& [channel, count] : stats.channel_message_counts) {
      if (counts.size() <= channel) {
        counts.resize(std::size_t{channel} + 1);
      }
      counts[channel] = count;
    }
    info.attachment_count = stats.attachment_count;
  } else {
    count_messages(r, info, counts);
  }

  const mcap::Summary& summary = r.summary();
  for (const mcap::Schema& schema : summary.schemas) {
    info.schemas.push_back(
        {.id = schema.id, .name = schema.name, .encoding = schema.encoding, .data_bytes = schema.data.size()});
  }
  std::sort(info.schemas.begin(), info.schemas.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (const mcap::Channel& channel : summary.channels) {
    ChannelInfo c{.id = channel.id,
                  .topic = channel.topic,
                  .message_encoding = channel.message_encoding,
                  .schema_id = channel.schema_id,
                  .schema_name = {},
                  .schema_encoding = {},
                  .message_count = channel.id < counts.size() ? counts[channel.id] : 0,
                  .metadata = channel.metadata,
                  .axon = std::nullopt};
    for (const mcap::Schema& schema : summary.schemas) {
      if (schema.id == channel.schema_id && channel.schema_id != 0) {
        c.schema_name = schema.name;
        c.schema_encoding = schema.encoding;
      }
    }
    if (channel.schema_id != 0 && c.schema_encoding.empty()) {
      info.notes.push_back("channel '" + channel.topic + "' names schema " + std::to_string(channel.schema_id) +
                           ", which the file does not hold");
    }
    c.axon = axon_identity(c, info.notes);
    info.channels.push_back(std::move(c));
  }
  std::sort(info.channels.begin(), info.channels.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  add_compressions(summary, info);
  info.chunk_count = summary.chunk_indexes.size();
  // A summary may count metadata it has no index for; a scan counts the records it found.
  info.metadata_count = std::max<std::uint64_t>(summary.metadata_indexes.size(), stats.metadata_count);
  return info;
}

double duration_s(const FileInfo& info) noexcept {
  if (!info.start_ns || !info.end_ns || *info.end_ns < *info.start_ns) {
    return 0;
  }
  return static_cast<double>(*info.end_ns - *info.start_ns) / 1e9;
}

std::optional<double> rate_hz(const FileInfo& info, const ChannelInfo& channel) noexcept {
  const double seconds = duration_s(info);
  if (seconds <= 0) {
    return std::nullopt;
  }
  return static_cast<double>(channel.message_count) / seconds;
}

}  // namespace axon::tools
