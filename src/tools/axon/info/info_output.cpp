// `axon info`'s text and JSON (info_output.hpp).
#include "src/tools/axon/info/info_output.hpp"

#include <fmt/format.h>

#include <ctime>

#include "src/tools/axon/doctor/check.hpp"
#include "src/tools/axon/text_table.hpp"

namespace axon::tools {
namespace {

using doctor::format_bytes;

/// `table` with each line indented under its section's heading.
std::string indented(const std::string& table) {
  std::string out;
  std::size_t at = 0;
  while (at < table.size()) {
    const std::size_t end = table.find('\n', at);
    out += "  " + table.substr(at, end - at + 1);
    at = end == std::string::npos ? table.size() : end + 1;
  }
  return out;
}

std::string or_none(const std::string& text) { return text.empty() ? "(none)" : text; }

std::string optional_number(const std::optional<std::uint64_t>& value) { return value ? std::to_string(*value) : "?"; }

/// "4 chunks, 1.2 MiB -> 310.0 KiB (25.1 %)" for one compression.
std::string compression_text(const CompressionInfo& c) {
  std::string text = fmt::format("{} chunk{}, {} uncompressed", c.chunks, c.chunks == 1 ? "" : "s",
                                 format_bytes(c.uncompressed_bytes));
  if (c.name != "none") {
    text += fmt::format(", {} compressed", format_bytes(c.compressed_bytes));
    if (c.uncompressed_bytes > 0) {
      text += fmt::format(" ({:.1f} %)",
                          100.0 * static_cast<double>(c.compressed_bytes) / static_cast<double>(c.uncompressed_bytes));
    }
  }
  return text;
}

std::string channels_table(const FileInfo& info) {
  TextTable table({"ID", "TOPIC", "MESSAGES", "RATE_HZ", "SCHEMA", "SCHEMA_ENCODING", "MESSAGE_ENCODING"});
  for (std::size_t column : {0, 2, 3}) {
    table.set_align(column, Align::kRight);
  }
  for (const ChannelInfo& c : info.channels) {
    const auto rate = rate_hz(info, c);
    table.add_row({std::to_string(c.id), c.topic, std::to_string(c.message_count),
                   rate ? fmt::format("{:.2f}", *rate) : "-", c.schema_id == 0 ? "(none)" : c.schema_name,
                   c.schema_id == 0 ? "-" : c.schema_encoding, or_none(c.message_encoding)});
  }
  return table.render();
}

std::string axon_types_table(const FileInfo& info) {
  TextTable table(
      {"TOPIC", "TYPE", "HASH", "SERIALIZER", "SIZE", "ALIGN", "VERSION", "MAX_PAYLOAD", "PUBLISHERS", "QOS"});
  for (std::size_t column : {4, 5, 6, 7}) {
    table.set_align(column, Align::kRight);
  }
  for (const ChannelInfo& c : info.channels) {
    if (!c.axon) {
      continue;
    }
    const AxonIdentity& a = *c.axon;
    table.add_row({c.topic, a.type_name, or_none(a.type_hash), or_none(a.serializer), optional_number(a.type_size),
                   optional_number(a.type_align), optional_number(a.type_version), optional_number(a.max_payload_bytes),
                   a.publisher_nodes.empty() ? "-" : a.publisher_nodes, a.qos.empty() ? "-" : a.qos});
  }
  return table.rows() == 0 ? std::string() : table.render();
}

void write_optional(JsonWriter& json, std::string_view key, const std::optional<std::uint64_t>& value) {
  json.key(key);
  if (value) {
    json.value(*value);
  } else {
    json.null_value();
  }
}

}  // namespace

std::string utc_text(std::uint64_t ns) {
  const auto seconds = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, ns % 1'000'000'000);
}

std::string recover_hint(const std::string& path) {
  return "`axon record --recover " + path + "` rebuilds the summary";
}

std::string info_text(const FileInfo& info) {
  std::string text;
  const auto line = [&](std::string_view label, const std::string& value) {
    text += fmt::format("{:<13}{}\n", std::string(label) + ":", value);
  };
  line("file", info.path + " (" + format_bytes(info.file_bytes) + ")");
  line("library", or_none(info.library));
  line("profile", or_none(info.profile));
  if (info.has_summary) {
    line("summary", "yes");
  } else {
    line("summary", "missing: " + info.summary_note);
    text += fmt::format("{:<13}described from the data section's complete chunks; {}\n", "", recover_hint(info.path));
  }
  line("messages", std::to_string(info.message_count));
  if (info.start_ns && info.end_ns) {
    line("duration", fmt::format("{:.3f} s", duration_s(info)));
    line("start", fmt::format("{} ({}.{:09})", utc_text(*info.start_ns), *info.start_ns / 1'000'000'000,
                              *info.start_ns % 1'000'000'000));
    line("end", fmt::format("{} ({}.{:09})", utc_text(*info.end_ns), *info.end_ns / 1'000'000'000,
                            *info.end_ns % 1'000'000'000));
  }
  line("chunks", std::to_string(info.chunk_count));
  for (const CompressionInfo& c : info.compressions) {
    line("  " + c.name, compression_text(c));
  }
  line("metadata", std::to_string(info.metadata_count));
  if (info.attachment_count > 0) {
    line("attachments", std::to_string(info.attachment_count));
  }
  text += fmt::format("channels ({}):\n", info.channels.size());
  if (!info.channels.empty()) {
    text += indented(channels_table(info));
  }
  if (const std::string types = axon_types_table(info); !types.empty()) {
    text += "axon types:\n" + indented(types);
  }
  text += fmt::format("schemas ({}):\n", info.schemas.size());
  if (!info.schemas.empty()) {
    TextTable table({"ID", "NAME", "ENCODING", "BYTES"});
    table.set_align(0, Align::kRight);
    table.set_align(3, Align::kRight);
    for (const SchemaInfo& s : info.schemas) {
      table.add_row({std::to_string(s.id), s.name, s.encoding, std::to_string(s.data_bytes)});
    }
    text += indented(table.render());
  }
  for (const std::string& note : info.notes) {
    text += "note: " + note + "\n";
  }
  return text;
}

void write_info_json(JsonWriter& json, const FileInfo& info) {
  json.begin_object()
      .member("path", info.path)
      .member("file_bytes", info.file_bytes)
      .member("library", info.library)
      .member("profile", info.profile)
      .member("has_summary", info.has_summary)
      .key("summary_note");
  if (info.has_summary) {
    json.null_value();
  } else {
    json.value(info.summary_note + "; " + recover_hint(info.path));
  }
  json.member("message_count", info.message_count);
  write_optional(json, "start_ns", info.start_ns);
  write_optional(json, "end_ns", info.end_ns);
  json.member("duration_s", duration_s(info))
      .member("chunk_count", info.chunk_count)
      .member("metadata_count", info.metadata_count)
      .member("attachment_count", info.attachment_count)
      .key("compression")
      .begin_array();
  for (const CompressionInfo& c : info.compressions) {
    json.begin_object()
        .member("name", c.name)
        .member("chunks", c.chunks)
        .member("compressed_bytes", c.compressed_bytes)
        .member("uncompressed_bytes", c.uncompressed_bytes)
        .end_object();
  }
  json.end_array().key("channels").begin_array();
  for (const ChannelInfo& c : info.channels) {
    json.begin_object()
        .member("id", c.id)
        .member("topic", c.topic)
        .member("message_count", c.message_count)
        .key("rate_hz");
    if (const auto rate = rate_hz(info, c)) {
      json.value(*rate);
    } else {
      json.null_value();
    }
    json.member("message_encoding", c.message_encoding).member("schema_id", c.schema_id).key("schema_name");
    if (c.schema_id == 0) {
      json.null_value().key("schema_encoding").null_value();
    } else {
      json.value(c.schema_name).member("schema_encoding", c.schema_encoding);
    }
    json.key("metadata").begin_object();
    for (const auto& [k, v] : c.metadata) {
      json.member(k, v);
    }
    json.end_object().key("axon");
    if (!c.axon) {
      json.null_value();
    } else {
      const AxonIdentity& a = *c.axon;
      json.begin_object()
          .member("type_name", a.type_name)
          .member("type_hash", a.type_hash)
          .member("serializer", a.serializer);
      write_optional(json, "type_size", a.type_size);
      write_optional(json, "type_align", a.type_align);
      write_optional(json, "type_version", a.type_version);
      write_optional(json, "max_payload_bytes", a.max_payload_bytes);
      json.member("publisher_nodes", a.publisher_nodes).member("qos", a.qos).end_object();
    }
    json.end_object();
  }
  json.end_array().key("schemas").begin_array();
  for (const SchemaInfo& s : info.schemas) {
    json.begin_object()
        .member("id", s.id)
        .member("name", s.name)
        .member("encoding", s.encoding)
        .member("data_bytes", s.data_bytes)
        .end_object();
  }
  json.end_array().key("notes").begin_array();
  for (const std::string& note : info.notes) {
    json.value(note);
  }
  json.end_array().end_object();
}

}  // namespace axon::tools
