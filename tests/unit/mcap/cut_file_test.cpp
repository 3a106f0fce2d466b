// A file cut anywhere (a killed writer, a full disk) reads up to its last complete chunk, never crashes the
// reader, and recover() makes it a complete file again. Run under the asan preset too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "src/tools/mcap/reader.hpp"
#include "src/tools/mcap/recover.hpp"
#include "tests/unit/mcap/mcap_test_files.hpp"

namespace axon::mcap::test {
namespace {

struct ChunkSpan {
  std::uint64_t end = 0;  // where the chunk record ends
  std::size_t messages = 0;
};

class McapCutFile : public ::testing::TestWithParam<Compression> {
 protected:
  TempDir dir_;
};

TEST_P(McapCutFile, ReadsEveryMessageOfTheCompleteChunksAtAnyCutAndRecoversTheFile) {
  const std::string path = dir_.file("whole.mcap");
  const Recording written = write_recording(path, {.compression = GetParam(), .chunk_bytes = 8 * 1024}, 120);
  // Where each chunk ends and how many messages it holds, from the whole file.
  std::vector<ChunkSpan> chunks;
  {
    auto whole = Reader::open(path);
    ASSERT_TRUE(whole.ok());
    for (const ChunkIndex& index : (*whole)->summary().chunk_indexes) {
      auto loaded = (*whole)->load_chunk(index);
      ASSERT_TRUE(loaded.ok());
      chunks.push_back({index.chunk_start_offset + index.chunk_length, loaded->messages.size()});
    }
  }
  ASSERT_GT(chunks.size(), 8U);
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
  const std::string cut_path = dir_.file("cut.mcap");
  const std::string recovered_path = dir_.file("recovered.mcap");

  // Cuts at uneven steps through the whole file, and on and around every chunk's end.
  std::vector<std::size_t> at;
  for (std::size_t cut = 0; cut <= bytes.size(); cut += 37 + cut % 331) {
    at.push_back(cut);
  }
  for (const ChunkSpan& chunk : chunks) {
    at.insert(at.end(), {chunk.end - 1, chunk.end, chunk.end + 1});
  }
  std::size_t cuts = 0;
  for (const std::size_t cut : at) {
    ++cuts;
    {
      std::ofstream out(cut_path, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(cut));
    }
    std::size_t expected = 0;
    for (const ChunkSpan& chunk : chunks) {
      expected += chunk.end <= cut ? chunk.messages : 0;
    }

    auto read = read_recording(cut_path);

    if (!read.ok()) {  // only a file cut before its header ends is refused
      EXPECT_LT(cut, 64U) << read.error().message();
      continue;
    }
    ASSERT_EQ(read->messages.size(), expected) << "cut at " << cut << " of " << bytes.size();
    for (const WrittenMessage& m : read->messages) {
      ASSERT_EQ(m.payload, written.messages.at(m.header.sequence).payload) << "cut at " << cut;
    }
    if (cuts % 8 == 0) {
      auto report = recover(cut_path, recovered_path);
      ASSERT_TRUE(report.ok()) << report.error().message();
      EXPECT_EQ(report->messages, expected);
      auto reader = Reader::open(recovered_path);
      ASSERT_TRUE(reader.ok());
      EXPECT_TRUE((*reader)->summary_used()) << (*reader)->scan_note();
      EXPECT_EQ((*reader)->summary().statistics.message_count, expected);
      auto again = read_recording(recovered_path);
      ASSERT_TRUE(again.ok()) << again.error().message();
      EXPECT_EQ(again->messages.size(), expected);
    }
  }
  EXPECT_GT(cuts, 100U);
}

INSTANTIATE_TEST_SUITE_P(AllCompressions, McapCutFile, ::testing::ValuesIn(kAllCompressions),
                         [](const auto& info) { return compression_test_name(info.param); });

TEST(McapRecover, RefusesToOverwriteItsInput) {
  auto sut = recover("/tmp/x.mcap", "/tmp/x.mcap");
  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace axon::mcap::test
