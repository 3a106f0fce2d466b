// Test recordings and their JSON description (mcap_test_files.hpp).
#include "tests/unit/mcap/mcap_test_files.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include "src/tools/mcap/crc32.hpp"

namespace axon::mcap::test {

TempDir::TempDir() {
  std::string templ = "/tmp/axon_mcap_XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
  }
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::vector<std::uint8_t> pattern(std::size_t bytes, std::uint32_t seed) {
  std::vector<std::uint8_t> out(bytes);
  std::uint32_t x = seed * 2654435761U + 1;
  for (auto& b : out) {
    x = x * 1664525U + 1013904223U;
    b = static_cast<std::uint8_t>(x >> 24);
  }
  return out;
}

Recording write_recording(const std::string& path, const WriterOptions& options, std::size_t message_count) {
  Recording rec;
  rec.header = {.profile = options.profile, .library = options.library};
  rec.summary = options.summary;
  auto writer = Writer::create(path, options);
  EXPECT_TRUE(writer.ok()) << writer.error().message();
  if (!writer.ok()) {
    return rec;
  }
  const std::vector<std::uint8_t> imu_schema = pattern(90, 1);
  const std::vector<std::uint8_t> frame_schema = pattern(40, 2);
  const auto imu = (*writer)->add_schema("demo.Imu", "protobuf", imu_schema);
  const auto frame = (*writer)->add_schema("demo.Frame", "flatbuffer", frame_schema);
  rec.schemas = {{.id = *imu, .name = "demo.Imu", .encoding = "protobuf", .data = imu_schema},
                 {.id = *frame, .name = "demo.Frame", .encoding = "flatbuffer", .data = frame_schema}};
  const std::vector<std::tuple<std::uint16_t, std::string, std::string, StringMap>> channels = {
      {*imu, "/imu", "protobuf", {{"qos", "reliable"}, {"node", "imu_driver"}}},
      {*frame, "/camera", "flatbuffer", {}},
      {0, "/raw", "axon.raw", {{"type", "axon::Raw"}}}};
  for (const auto& [schema, topic, encoding, metadata] : channels) {
    const auto id = (*writer)->add_channel(schema, topic, encoding, metadata);
    EXPECT_TRUE(id.ok()) << id.error().message();
    rec.channels.push_back(
        {.id = *id, .schema_id = schema, .topic = topic, .message_encoding = encoding, .metadata = metadata});
  }
  // The payloads must stay alive until the writer releases them: all of them are kept here.
  rec.messages.reserve(message_count);
  for (std::size_t i = 0; i < message_count; ++i) {
    const auto channel = static_cast<std::uint16_t>(i % 3);
    // /camera runs 50 ms behind the others, so chunks overlap in log time.
    const std::uint64_t log_time = 1'700'000'000'000'000'000ULL + i * 1'000'000ULL - (channel == 1 ? 50'000'000 : 0);
    rec.messages.push_back({.header = {.channel_id = channel,
                                       .sequence = static_cast<std::uint32_t>(i),
                                       .log_time = log_time,
                                       .publish_time = log_time - 700},
                            .payload = pattern((i * 53) % 3000, static_cast<std::uint32_t>(i))});
    const auto released = (*writer)->add_message(rec.messages.back().header, rec.messages.back().payload);
    EXPECT_TRUE(released.ok()) << released.error().message();
  }
  const auto closed = (*writer)->close();
  EXPECT_TRUE(closed.ok()) << closed.error().message();
  const std::size_t chunks = (*writer)->statistics().chunk_count;
  rec.compressions.assign(chunks, std::string(compression_name(options.compression)));
  return rec;
}

std::string compression_test_name(Compression compression) {
  const std::string name(compression_name(compression));
  return name.empty() ? std::string("none") : name;
}

Result<Recording> read_recording(const std::string& path, ReaderOptions options) {
  auto reader = Reader::open(path, options);
  if (!reader.ok()) {
    return reader.error();
  }
  Recording rec;
  rec.header = (*reader)->header();
  rec.summary = (*reader)->summary_used();
  auto cursor = (*reader)->messages();
  Message message;
  for (;;) {
    auto more = cursor.next(message);
    if (!more.ok()) {
      return more.error();
    }
    if (!*more) {
      break;
    }
    rec.messages.push_back({.header = message.header, .payload = {message.data.begin(), message.data.end()}});
  }
  rec.schemas = (*reader)->summary().schemas;
  rec.channels = (*reader)->summary().channels;
  for (const ChunkIndex& chunk : (*reader)->summary().chunk_indexes) {
    rec.compressions.push_back(chunk.compression);
  }
  return rec;
}

namespace {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string describe(const Recording& rec, const std::string& data_crc_ok) {
  std::vector<std::string> compressions;
  for (const std::string& c : rec.compressions) {
    compressions.push_back(c.empty() ? "none" : c);
  }
  std::sort(compressions.begin(), compressions.end());
  compressions.erase(std::unique(compressions.begin(), compressions.end()), compressions.end());

  std::string out = "{\"summary\":" + std::string(rec.summary ? "true" : "false") +
                    ",\"profile\":" + json_string(rec.header.profile) +
                    ",\"library\":" + json_string(rec.header.library) + ",\"compression\":[";
  for (std::size_t i = 0; i < compressions.size(); ++i) {
    out += (i == 0 ? "" : ",") + json_string(compressions[i]);
  }
  out +=
      "],\"chunks\":" + std::to_string(rec.compressions.size()) + ",\"data_crc_ok\":" + data_crc_ok + ",\"schemas\":[";
  std::vector<Schema> schemas = rec.schemas;
  std::sort(schemas.begin(), schemas.end(), [](const Schema& a, const Schema& b) { return a.id < b.id; });
  for (std::size_t i = 0; i < schemas.size(); ++i) {
    const Schema& s = schemas[i];
    out += std::string(i == 0 ? "" : ",") + "{\"id\":" + std::to_string(s.id) + ",\"name\":" + json_string(s.name) +
           ",\"encoding\":" + json_string(s.encoding) + ",\"size\":" + std::to_string(s.data.size()) +
           ",\"crc\":" + std::to_string(crc32(s.data)) + "}";
  }
  out += "],\"channels\":[";
  std::vector<Channel> channels = rec.channels;
  std::sort(channels.begin(), channels.end(), [](const Channel& a, const Channel& b) { return a.id < b.id; });
  for (std::size_t i = 0; i < channels.size(); ++i) {
    const Channel& c = channels[i];
    out += std::string(i == 0 ? "" : ",") + "{\"id\":" + std::to_string(c.id) + ",\"topic\":" + json_string(c.topic) +
           ",\"schema\":" + std::to_string(c.schema_id) + ",\"encoding\":" + json_string(c.message_encoding) +
           ",\"metadata\":[";
    for (std::size_t k = 0; k < c.metadata.size(); ++k) {
      out += std::string(k == 0 ? "" : ",") + "[" + json_string(c.metadata[k].first) + "," +
             json_string(c.metadata[k].second) + "]";
    }
    out += "]}";
  }
  out += "],\"counts\":[";
  std::map<std::uint16_t, std::size_t> counts;
  for (const WrittenMessage& m : rec.messages) {
    ++counts[m.header.channel_id];
  }
  bool first = true;
  for (const auto& [channel, count] : counts) {
    out += std::string(first ? "" : ",") + "[" + std::to_string(channel) + "," + std::to_string(count) + "]";
    first = false;
  }
  out += "],\"messages\":[";
  std::vector<const WrittenMessage*> sorted;
  for (const WrittenMessage& m : rec.messages) {
    sorted.push_back(&m);
  }
  std::sort(sorted.begin(), sorted.end(), [](const WrittenMessage* a, const WrittenMessage* b) {
    return std::tie(a->header.log_time, a->header.channel_id, a->header.sequence) <
           std::tie(b->header.log_time, b->header.channel_id, b->header.sequence);
  });
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const WrittenMessage& m = *sorted[i];
    out += std::string(i == 0 ? "" : ",") + "[" + std::to_string(m.header.channel_id) + "," +
           std::to_string(m.header.sequence) + ",\"" + std::to_string(m.header.log_time) + "\",\"" +
           std::to_string(m.header.publish_time) + "\"," + std::to_string(m.payload.size()) + "," +
           std::to_string(crc32(m.payload)) + "]";
  }
  return out + "]}";
}

}  // namespace axon::mcap::test
