// axon's MCAP writer and reader together: every message back in log-time order, the writer's zero-copy
// release contract, summary and scan, full disks and corrupt files.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <tuple>

#include "src/tools/mcap/reader.hpp"
#include "src/tools/mcap/writer.hpp"
#include "tests/unit/mcap/mcap_test_files.hpp"

namespace axon::mcap::test {
namespace {

std::vector<std::uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void put_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

bool by_time(const WrittenMessage& a, const WrittenMessage& b) {
  return std::tie(a.header.log_time, a.header.channel_id, a.header.sequence) <
         std::tie(b.header.log_time, b.header.channel_id, b.header.sequence);
}

class McapWriterReader : public ::testing::TestWithParam<Compression> {
 protected:
  TempDir dir_;
};

TEST_P(McapWriterReader, ReadsEveryMessageBackInLogTimeOrderAcrossOverlappingChunks) {
  const std::string path = dir_.file("a.mcap");
  Recording written = write_recording(path, {.compression = GetParam(), .chunk_bytes = 32 * 1024}, 500);

  auto sut = read_recording(path);

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_TRUE(sut->summary);
  EXPECT_GT(sut->compressions.size(), 5U);
  ASSERT_EQ(sut->messages.size(), written.messages.size());
  EXPECT_TRUE(std::is_sorted(sut->messages.begin(), sut->messages.end(),
                             [](const auto& a, const auto& b) { return a.header.log_time < b.header.log_time; }));
  std::sort(written.messages.begin(), written.messages.end(), by_time);
  std::sort(sut->messages.begin(), sut->messages.end(), by_time);
  for (std::size_t i = 0; i < written.messages.size(); ++i) {
    ASSERT_EQ(sut->messages[i].header.sequence, written.messages[i].header.sequence) << i;
    ASSERT_EQ(sut->messages[i].header.publish_time, written.messages[i].header.publish_time) << i;
    ASSERT_EQ(sut->messages[i].payload, written.messages[i].payload) << i;
  }
  EXPECT_EQ(describe(*sut, "null"), describe(written, "null"));
}

TEST_P(McapWriterReader, ScansAFileWithoutSummaryAndSaysWhy) {
  const std::string path = dir_.file("a.mcap");
  const Recording written =
      write_recording(path, {.compression = GetParam(), .chunk_bytes = 16 * 1024, .summary = false}, 200);

  auto reader = Reader::open(path);

  ASSERT_TRUE(reader.ok()) << reader.error().message();
  EXPECT_FALSE((*reader)->summary_used());
  EXPECT_TRUE((*reader)->data_end_seen());
  EXPECT_NE((*reader)->scan_note().find("no summary"), std::string::npos) << (*reader)->scan_note();
  auto read = read_recording(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(describe(*read, "null"), describe(written, "null"));
}

INSTANTIATE_TEST_SUITE_P(AllCompressions, McapWriterReader, ::testing::ValuesIn(kAllCompressions),
                         [](const auto& info) { return compression_test_name(info.param); });

TEST(McapWriter, UncompressedWritesTheCallersBytesAtTheChunkAndReleasesThemThen) {
  TempDir dir;
  const std::string path = dir.file("a.mcap");
  auto sut = Writer::create(path, {.compression = Compression::kNone, .chunk_messages = 4});
  ASSERT_TRUE(sut.ok());
  const auto channel = (*sut)->add_channel(0, "/t", "raw");
  ASSERT_TRUE(channel.ok());
  std::vector<std::vector<std::uint8_t>> payloads(6, std::vector<std::uint8_t>(100, 1));
  std::vector<std::size_t> released;
  for (std::uint32_t i = 0; i < 6; ++i) {
    auto r = (*sut)->add_message({.channel_id = *channel, .sequence = i, .log_time = i}, payloads[i]);
    ASSERT_TRUE(r.ok()) << r.error().message();
    released.push_back(*r);
  }
  // Held payloads are written from the caller's memory: a change before the chunk is written shows in the file.
  payloads[5].assign(100, 42);
  EXPECT_EQ((*sut)->held_payloads(), 2U);
  auto closed = (*sut)->close();

  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(released, (std::vector<std::size_t>{0, 0, 0, 4, 0, 0}));
  EXPECT_EQ(*closed, 2U);
  auto read = read_recording(path);
  ASSERT_TRUE(read.ok()) << read.error().message();
  ASSERT_EQ(read->messages.size(), 6U);
  EXPECT_EQ(read->messages[5].payload, std::vector<std::uint8_t>(100, 42));
}

TEST(McapWriter, CompressedFeedsTheCompressorAndReleasesEachPayloadAtOnce) {
  TempDir dir;
  const std::string path = dir.file("a.mcap");
  auto sut = Writer::create(path, {.compression = Compression::kLz4});
  ASSERT_TRUE(sut.ok());
  const auto channel = (*sut)->add_channel(0, "/t", "raw");
  std::vector<std::uint8_t> payload(100, 1);

  auto released = (*sut)->add_message({.channel_id = *channel}, payload);
  payload.assign(100, 42);  // released: the file keeps what it had when add_message() returned

  ASSERT_TRUE(released.ok());
  EXPECT_EQ(*released, 1U);
  EXPECT_EQ((*sut)->held_payloads(), 0U);
  ASSERT_TRUE((*sut)->close().ok());
  auto read = read_recording(path);
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->messages.size(), 1U);
  EXPECT_EQ(read->messages[0].payload, std::vector<std::uint8_t>(100, 1));
}

TEST(McapWriter, AFullDiskIsAnErrorNamingThePathAndTheFreeSpace) {
  auto sut = Writer::create("/dev/full");

  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kNoSpace);
  const std::string message(sut.error().message());
  EXPECT_NE(message.find("writing /dev/full: the disk is full"), std::string::npos) << message;
  EXPECT_NE(message.find("free on its file system"), std::string::npos) << message;
}

TEST(McapWriter, RefusesAMessageOnAChannelItDoesNotKnowAndCallsAfterClose) {
  TempDir dir;
  auto sut = Writer::create(dir.file("a.mcap"));
  ASSERT_TRUE(sut.ok());
  const std::vector<std::uint8_t> payload(4);
  auto unknown = (*sut)->add_message({.channel_id = 3}, payload);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code(), ErrorCode::kInvalidArgument);
  ASSERT_TRUE((*sut)->close().ok());
  EXPECT_EQ((*sut)->add_channel(0, "/t", "raw").error().code(), ErrorCode::kClosed);
}

TEST(McapWriter, WritesMetadataAndCountsItInTheSummary) {
  TempDir dir;
  const std::string path = dir.file("a.mcap");
  auto sut = Writer::create(path);
  ASSERT_TRUE(sut.ok());
  ASSERT_TRUE((*sut)->add_metadata({.name = "run", .metadata = {{"vehicle", "v7"}}}).ok());
  ASSERT_TRUE((*sut)->close().ok());

  auto reader = Reader::open(path);

  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE((*reader)->summary_used());
  ASSERT_EQ((*reader)->summary().metadata_indexes.size(), 1U);
  const MetadataIndex index = (*reader)->summary().metadata_indexes[0];
  EXPECT_EQ(index.name, "run");
  auto bytes = (*reader)->read(index.offset, index.length);
  ASSERT_TRUE(bytes.ok());
  auto record = next_record(*bytes, 0);
  ASSERT_TRUE(record.ok());
  auto metadata = decode_metadata(record->content);
  ASSERT_TRUE(metadata.ok());
  EXPECT_EQ(metadata->metadata, (StringMap{{"vehicle", "v7"}}));
  EXPECT_EQ((*reader)->summary().statistics.metadata_count, 1U);
}

TEST(McapReader, FallsBackToAScanWhenTheSummaryCrcIsWrong) {
  TempDir dir;
  const std::string path = dir.file("a.mcap");
  const Recording written = write_recording(path, {.compression = Compression::kZstd, .chunk_bytes = 16 * 1024}, 100);
  std::vector<std::uint8_t> bytes = file_bytes(path);
  bytes[bytes.size() - kMagic.size() - 5] ^= 0xFF;  // a byte of the footer's summary offset start
  put_file(path, bytes);

  auto reader = Reader::open(path);

  ASSERT_TRUE(reader.ok()) << reader.error().message();
  EXPECT_FALSE((*reader)->summary_used());
  EXPECT_NE((*reader)->scan_note().find("summary"), std::string::npos) << (*reader)->scan_note();
  auto read = read_recording(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->messages.size(), written.messages.size());
}

TEST(McapReader, RefusesAChunkThatDoesNotMatchItsCrc) {
  TempDir dir;
  const std::string path = dir.file("a.mcap");
  (void)write_recording(path, {.compression = Compression::kNone, .chunk_bytes = 16 * 1024}, 50);
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader.ok());
  const ChunkIndex chunk = (*reader)->summary().chunk_indexes.at(0);
  std::vector<std::uint8_t> bytes = file_bytes(path);
  bytes[chunk.chunk_start_offset + chunk.chunk_length - 1] ^= 0x01;  // the last payload byte of the chunk
  put_file(path, bytes);
  auto corrupt = Reader::open(path);
  ASSERT_TRUE(corrupt.ok());

  auto cursor = (*corrupt)->messages();
  Message message;
  auto next = cursor.next(message);

  ASSERT_FALSE(next.ok());
  EXPECT_NE(std::string(next.error().message()).find("does not match its CRC"), std::string::npos)
      << next.error().message();
}

TEST(McapReader, RefusesAChunkDeclaringMoreThanItsLimit) {
  TempDir dir;
  const std::string path = dir.file("a.mcap");
  (void)write_recording(path, {.compression = Compression::kZstd, .chunk_bytes = 64 * 1024}, 50);
  auto reader = Reader::open(path, {.max_chunk_bytes = 1024});
  ASSERT_TRUE(reader.ok());

  auto cursor = (*reader)->messages();
  Message message;
  auto next = cursor.next(message);

  ASSERT_FALSE(next.ok());
  EXPECT_NE(std::string(next.error().message()).find("more than the reader's limit"), std::string::npos)
      << next.error().message();
}

TEST(McapReader, RefusesAFileThatIsNotMcap) {
  TempDir dir;
  const std::string path = dir.file("a.txt");
  put_file(path, std::vector<std::uint8_t>(100, 'x'));

  auto sut = Reader::open(path);

  ASSERT_FALSE(sut.ok());
  EXPECT_NE(std::string(sut.error().message()).find("is not an MCAP file"), std::string::npos);
}

}  // namespace
}  // namespace axon::mcap::test
