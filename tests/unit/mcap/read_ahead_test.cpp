// A cursor whose chunks a thread reads ahead (chunk_read_ahead.hpp): the same messages in the same order as a
// cursor that reads them itself, a corrupt chunk reported at the same place and the rest read on, and a cursor
// dropped mid-file stopping its thread. Run under TSan in CI: the reader is shared by the two threads.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "src/tools/mcap/reader.hpp"
#include "src/tools/mcap/writer.hpp"
#include "tests/unit/mcap/mcap_test_files.hpp"

namespace axon::mcap::test {
namespace {

/// What a cursor gave: each message (log time, sequence, payload) or an error's text, in order.
struct Outcome {
  std::uint64_t log_time = 0;
  std::uint32_t sequence = 0;
  std::vector<std::uint8_t> payload;
  std::string error;
  bool operator==(const Outcome&) const = default;
};

std::vector<Outcome> read_all(Reader& reader, std::size_t read_ahead_chunks) {
  std::vector<Outcome> got;
  MessageCursor cursor = reader.messages(read_ahead_chunks);
  cursor.wait_read_ahead();  // returns at once without read-ahead
  Message message;
  for (int errors = 0; errors < 100;) {
    auto more = cursor.next(message);
    if (!more.ok()) {
      got.push_back({.error = std::string(more.error().message())});
      ++errors;
      continue;  // goes on with the chunks after the corrupt one
    }
    if (!*more) {
      break;
    }
    got.push_back({.log_time = message.header.log_time,
                   .sequence = message.header.sequence,
                   .payload = {message.data.begin(), message.data.end()}});
  }
  return got;
}

class McapReadAhead : public ::testing::TestWithParam<Compression> {
 protected:
  TempDir dir_;
};

TEST_P(McapReadAhead, GivesTheMessagesOfACursorThatReadsItself) {
  const std::string path = dir_.file("a.mcap");
  const Recording written = write_recording(path, {.compression = GetParam(), .chunk_bytes = 16 * 1024}, 600);
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  ASSERT_GT((*reader)->summary().chunk_indexes.size(), 8U);  // enough chunks to be read ahead

  const std::vector<Outcome> in_place = read_all(**reader, 0);
  const std::vector<Outcome> read_ahead = read_all(**reader, 2);
  const std::vector<Outcome> one_ahead = read_all(**reader, 1);

  ASSERT_EQ(in_place.size(), written.messages.size());
  EXPECT_EQ(read_ahead, in_place);
  EXPECT_EQ(one_ahead, in_place);
}

INSTANTIATE_TEST_SUITE_P(AllCompressions, McapReadAhead, ::testing::ValuesIn(kAllCompressions),
                         [](const auto& info) { return compression_test_name(info.param); });

TEST(McapReadAhead, ReportsACorruptChunkWhereTheCursorReachesItAndReadsOn) {
  TempDir dir;
  const std::string path = dir.file("a.mcap");
  (void)write_recording(path, {.compression = Compression::kNone, .chunk_bytes = 16 * 1024}, 300);
  std::vector<std::uint8_t> bytes;
  {
    auto reader = Reader::open(path);
    ASSERT_TRUE(reader.ok());
    ASSERT_GT((*reader)->summary().chunk_indexes.size(), 4U);
    const ChunkIndex chunk = (*reader)->summary().chunk_indexes.at(2);
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
    bytes[chunk.chunk_start_offset + chunk.chunk_length - 1] ^= 0x01;  // the chunk's last payload byte
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader.ok());

  const std::vector<Outcome> in_place = read_all(**reader, 0);
  const std::vector<Outcome> read_ahead = read_all(**reader, 3);

  std::size_t errors = 0;
  for (const Outcome& outcome : in_place) {
    errors += outcome.error.empty() ? 0 : 1;
  }
  EXPECT_EQ(errors, 1U);
  EXPECT_FALSE(in_place.back().error.size() > 0);  // messages after the corrupt chunk were read
  EXPECT_EQ(read_ahead, in_place);
}

TEST(McapReadAhead, ACursorDroppedMidFileStopsItsThread) {
  TempDir dir;
  const std::string path = dir.file("a.mcap");
  (void)write_recording(path, {.compression = Compression::kZstd, .chunk_bytes = 8 * 1024}, 400);
  auto reader = Reader::open(path);
  ASSERT_TRUE(reader.ok());

  for (int round = 0; round < 20; ++round) {  // the thread is stopped in every state: waiting, reading, done
    MessageCursor cursor = (*reader)->messages(2);
    Message message;
    for (int i = 0; i < round * 7; ++i) {
      ASSERT_TRUE(cursor.next(message).ok());
    }
  }  // each cursor's destructor joined its thread, or the test hangs and times out

  // The reader is still whole for a cursor after them.
  EXPECT_EQ(read_all(**reader, 2), read_all(**reader, 0));
}

}  // namespace
}  // namespace axon::mcap::test
