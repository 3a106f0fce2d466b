// Each MCAP record type: encoded then decoded gives it back, and corrupt content is refused with a message
// that names the record and the field.
#include "src/tools/mcap/records.hpp"

#include <gtest/gtest.h>

#include <string>

namespace axon::mcap {
namespace {

// The one record `bytes` holds: its opcode checked and its content.
Bytes only_record(const std::vector<std::uint8_t>& bytes, Opcode opcode) {
  auto record = next_record(bytes, 0);
  EXPECT_TRUE(record.ok()) << record.error().message();
  EXPECT_EQ(record->opcode, opcode);
  EXPECT_EQ(record->total_bytes, bytes.size());
  return record->content;
}

TEST(McapRecords, HeaderRoundTrips) {
  std::vector<std::uint8_t> bytes;
  encode(Header{.profile = "ros2", .library = "axon 0.1"}, bytes);
  auto sut = decode_header(only_record(bytes, Opcode::kHeader));
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->profile, "ros2");
  EXPECT_EQ(sut->library, "axon 0.1");
}

TEST(McapRecords, FooterRoundTripsAtItsFixedSize) {
  std::vector<std::uint8_t> bytes;
  encode(Footer{.summary_start = 1234, .summary_offset_start = 5678, .summary_crc = 0xDEADBEEF}, bytes);
  EXPECT_EQ(bytes.size(), kFooterRecordBytes);
  auto sut = decode_footer(only_record(bytes, Opcode::kFooter));
  ASSERT_TRUE(sut.ok());
  EXPECT_EQ(sut->summary_start, 1234U);
  EXPECT_EQ(sut->summary_offset_start, 5678U);
  EXPECT_EQ(sut->summary_crc, 0xDEADBEEFU);
}

TEST(McapRecords, SchemaRoundTrips) {
  std::vector<std::uint8_t> bytes;
  encode(Schema{.id = 7, .name = "demo.Imu", .encoding = "protobuf", .data = {1, 2, 3, 0, 255}}, bytes);
  auto sut = decode_schema(only_record(bytes, Opcode::kSchema));
  ASSERT_TRUE(sut.ok());
  EXPECT_EQ(sut->id, 7);
  EXPECT_EQ(sut->name, "demo.Imu");
  EXPECT_EQ(sut->encoding, "protobuf");
  EXPECT_EQ(sut->data, (std::vector<std::uint8_t>{1, 2, 3, 0, 255}));
}

TEST(McapRecords, ChannelRoundTripsWithItsMetadataInOrder) {
  std::vector<std::uint8_t> bytes;
  const StringMap metadata = {{"qos", "reliable"}, {"node", "lidar"}, {"", ""}};
  encode(Channel{.id = 3, .schema_id = 2, .topic = "/lidar", .message_encoding = "flatbuffer", .metadata = metadata},
         bytes);
  auto sut = decode_channel(only_record(bytes, Opcode::kChannel));
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->id, 3);
  EXPECT_EQ(sut->schema_id, 2);
  EXPECT_EQ(sut->topic, "/lidar");
  EXPECT_EQ(sut->message_encoding, "flatbuffer");
  EXPECT_EQ(sut->metadata, metadata);
}

TEST(McapRecords, MessageRoundTripsAndItsPrefixMatchesTheWholeEncoding) {
  const std::vector<std::uint8_t> payload = {9, 8, 7, 6};
  const Message message{.header = {.channel_id = 4, .sequence = 99, .log_time = 1ULL << 60, .publish_time = 42},
                        .data = payload};
  std::vector<std::uint8_t> bytes;
  encode(message, bytes);
  std::array<std::uint8_t, kMessagePrefixBytes> prefix{};
  encode_message_prefix(message.header, payload.size(), prefix);
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), bytes.begin()));

  auto sut = decode_message(only_record(bytes, Opcode::kMessage));
  ASSERT_TRUE(sut.ok());
  EXPECT_EQ(sut->header.channel_id, 4);
  EXPECT_EQ(sut->header.sequence, 99U);
  EXPECT_EQ(sut->header.log_time, 1ULL << 60);
  EXPECT_EQ(sut->header.publish_time, 42U);
  EXPECT_EQ(std::vector<std::uint8_t>(sut->data.begin(), sut->data.end()), payload);
}

TEST(McapRecords, ChunkRoundTrips) {
  const std::vector<std::uint8_t> records = {1, 2, 3, 4, 5};
  std::vector<std::uint8_t> bytes;
  encode(Chunk{.message_start_time = 10,
               .message_end_time = 20,
               .uncompressed_size = 500,
               .uncompressed_crc = 77,
               .compression = "zstd",
               .records = records},
         bytes);
  auto sut = decode_chunk(only_record(bytes, Opcode::kChunk));
  ASSERT_TRUE(sut.ok());
  EXPECT_EQ(sut->message_start_time, 10U);
  EXPECT_EQ(sut->message_end_time, 20U);
  EXPECT_EQ(sut->uncompressed_size, 500U);
  EXPECT_EQ(sut->uncompressed_crc, 77U);
  EXPECT_EQ(sut->compression, "zstd");
  EXPECT_EQ(std::vector<std::uint8_t>(sut->records.begin(), sut->records.end()), records);
}

TEST(McapRecords, MessageIndexRoundTrips) {
  std::vector<std::uint8_t> bytes;
  encode(MessageIndex{.channel_id = 5, .records = {{100, 0}, {200, 31}, {300, 90}}}, bytes);
  auto sut = decode_message_index(only_record(bytes, Opcode::kMessageIndex));
  ASSERT_TRUE(sut.ok());
  EXPECT_EQ(sut->channel_id, 5);
  EXPECT_EQ(sut->records, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{100, 0}, {200, 31}, {300, 90}}));
}

TEST(McapRecords, ChunkIndexRoundTrips) {
  const ChunkIndex index{.message_start_time = 1,
                         .message_end_time = 2,
                         .chunk_start_offset = 3,
                         .chunk_length = 4,
                         .message_index_offsets = {{0, 5}, {9, 6}},
                         .message_index_length = 7,
                         .compression = "lz4",
                         .compressed_size = 8,
                         .uncompressed_size = 9};
  std::vector<std::uint8_t> bytes;
  encode(index, bytes);
  auto sut = decode_chunk_index(only_record(bytes, Opcode::kChunkIndex));
  ASSERT_TRUE(sut.ok());
  EXPECT_EQ(sut->message_start_time, 1U);
  EXPECT_EQ(sut->message_end_time, 2U);
  EXPECT_EQ(sut->chunk_start_offset, 3U);
  EXPECT_EQ(sut->chunk_length, 4U);
  EXPECT_EQ(sut->message_index_offsets, index.message_index_offsets);
  EXPECT_EQ(sut->message_index_length, 7U);
  EXPECT_EQ(sut->compression, "lz4");
  EXPECT_EQ(sut->compressed_size, 8U);
  EXPECT_EQ(sut->uncompressed_size, 9U);
}

TEST(McapRecords, StatisticsRoundTrips) {
  const Statistics stats{.message_count = 1000,
                         .schema_count = 2,
                         .channel_count = 3,
                         .attachment_count = 0,
                         .metadata_count = 1,
                         .chunk_count = 12,
                         .message_start_time = 5,
                         .message_end_time = 6,
                         .channel_message_counts = {{0, 500}, {2, 500}}};
  std::vector<std::uint8_t> bytes;
  encode(stats, bytes);
  auto sut = decode_statistics(only_record(bytes, Opcode::kStatistics));
  ASSERT_TRUE(sut.ok());
  EXPECT_EQ(sut->message_count, 1000U);
  EXPECT_EQ(sut->schema_count, 2);
  EXPECT_EQ(sut->channel_count, 3U);
  EXPECT_EQ(sut->metadata_count, 1U);
  EXPECT_EQ(sut->chunk_count, 12U);
  EXPECT_EQ(sut->message_start_time, 5U);
  EXPECT_EQ(sut->message_end_time, 6U);
  EXPECT_EQ(sut->channel_message_counts, stats.channel_message_counts);
}

TEST(McapRecords, MetadataMetadataIndexSummaryOffsetAndDataEndRoundTrip) {
  std::vector<std::uint8_t> bytes;
  encode(Metadata{.name = "run", .metadata = {{"vehicle", "v7"}}}, bytes);
  auto metadata = decode_metadata(only_record(bytes, Opcode::kMetadata));
  ASSERT_TRUE(metadata.ok());
  EXPECT_EQ(metadata->name, "run");
  EXPECT_EQ(metadata->metadata, (StringMap{{"vehicle", "v7"}}));

  bytes.clear();
  encode(MetadataIndex{.offset = 11, .length = 22, .name = "run"}, bytes);
  auto index = decode_metadata_index(only_record(bytes, Opcode::kMetadataIndex));
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->offset, 11U);
  EXPECT_EQ(index->length, 22U);
  EXPECT_EQ(index->name, "run");

  bytes.clear();
  encode(SummaryOffset{.group_opcode = Opcode::kChunkIndex, .group_start = 33, .group_length = 44}, bytes);
  auto offset = decode_summary_offset(only_record(bytes, Opcode::kSummaryOffset));
  ASSERT_TRUE(offset.ok());
  EXPECT_EQ(offset->group_opcode, Opcode::kChunkIndex);
  EXPECT_EQ(offset->group_start, 33U);
  EXPECT_EQ(offset->group_length, 44U);

  bytes.clear();
  encode(DataEnd{.data_section_crc = 0x12345678}, bytes);
  auto data_end = decode_data_end(only_record(bytes, Opcode::kDataEnd));
  ASSERT_TRUE(data_end.ok());
  EXPECT_EQ(data_end->data_section_crc, 0x12345678U);
}

TEST(McapRecords, RefusesARecordLongerThanItsBuffer) {
  std::vector<std::uint8_t> bytes;
  encode(Header{.profile = "", .library = "axon"}, bytes);
  bytes.pop_back();

  auto sut = next_record(bytes, 0);

  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kMalformed);
  EXPECT_NE(std::string(sut.error().message()).find("cut short or corrupt length"), std::string::npos)
      << sut.error().message();
}

TEST(McapRecords, RefusesOpcodeZeroAndAPrefixCutShort) {
  const std::vector<std::uint8_t> zeros(32, 0);
  auto zero = next_record(zeros, 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(std::string(zero.error().message()).find("opcode 0 is reserved"), std::string::npos);

  auto cut = next_record(zeros, 28);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(std::string(cut.error().message()).find("fewer than 9 bytes"), std::string::npos);
}

TEST(McapRecords, RefusesAStringLongerThanTheRecordAndNamesTheField) {
  std::vector<std::uint8_t> bytes;
  encode(Schema{.id = 1, .name = "demo.Imu", .encoding = "protobuf", .data = {}}, bytes);
  // The name's length (after opcode, length and id) claims a gigabyte.
  bytes[kRecordPrefixBytes + 2 + 3] = 0x40;

  auto sut = decode_schema(only_record(bytes, Opcode::kSchema));

  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().message(),
            "MCAP Schema record: field 'name' needs 1073741832 bytes, the record has 24 left (the file is corrupt or "
            "cut short)");
}

TEST(McapRecords, RefusesAMapWhoseEntriesOverrunItsLength) {
  std::vector<std::uint8_t> bytes;
  encode(Channel{.id = 1, .schema_id = 0, .topic = "/t", .message_encoding = "e", .metadata = {{"k", "v"}}}, bytes);
  // The map's byte length (after id, schema id and two strings) says 5 where its one entry takes 10.
  const std::size_t map_at = kRecordPrefixBytes + 2 + 2 + (4 + 2) + (4 + 1);
  bytes[map_at] = 5;

  auto sut = decode_channel(only_record(bytes, Opcode::kChannel));

  ASSERT_FALSE(sut.ok());
  EXPECT_NE(std::string(sut.error().message()).find("field 'metadata'"), std::string::npos) << sut.error().message();
}

TEST(McapRecords, RefusesEveryTruncationOfEachRecordType) {
  std::vector<std::vector<std::uint8_t>> records(6);
  encode(Footer{.summary_start = 1, .summary_offset_start = 2, .summary_crc = 3}, records[0]);
  encode(Chunk{.message_start_time = 1, .compression = "lz4", .records = {}}, records[1]);
  encode(ChunkIndex{.message_index_offsets = {{1, 2}}, .compression = "zstd"}, records[2]);
  encode(Statistics{.channel_message_counts = {{1, 2}}}, records[3]);
  encode(MessageIndex{.channel_id = 1, .records = {{1, 2}}}, records[4]);
  encode(Metadata{.name = "n", .metadata = {{"a", "b"}}}, records[5]);
  for (const auto& bytes : records) {
    const Bytes content = Bytes(bytes).subspan(kRecordPrefixBytes);
    for (std::size_t cut = 0; cut < content.size(); ++cut) {
      const Bytes shorter = content.first(cut);
      bool refused = false;
      switch (static_cast<Opcode>(bytes[0])) {
        case Opcode::kFooter: refused = !decode_footer(shorter).ok(); break;
        case Opcode::kChunk: refused = !decode_chunk(shorter).ok(); break;
        case Opcode::kChunkIndex: refused = !decode_chunk_index(shorter).ok(); break;
        case Opcode::kStatistics: refused = !decode_statistics(shorter).ok(); break;
        case Opcode::kMessageIndex: refused = !decode_message_index(shorter).ok(); break;
        default: refused = !decode_metadata(shorter).ok(); break;
      }
      EXPECT_TRUE(refused) << "opcode " << int{bytes[0]} << " cut to " << cut << " bytes";
    }
  }
}

}  // namespace
}  // namespace axon::mcap
