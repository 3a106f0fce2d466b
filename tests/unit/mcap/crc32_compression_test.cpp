// CRC-32 against its check value, and chunk compression: streams round trip, and decompression is bounded by
// the declared size.
#include <gtest/gtest.h>

#include <string>

#include "src/tools/mcap/compression.hpp"
#include "src/tools/mcap/crc32.hpp"
#include "tests/unit/mcap/mcap_test_files.hpp"

namespace axon::mcap {
namespace {

TEST(McapCrc32, MatchesTheCheckValueInOnePieceAndInMany) {
  const std::string text = "123456789";
  const Bytes bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  EXPECT_EQ(crc32(bytes), 0xCBF43926U);

  const std::vector<std::uint8_t> data = test::pattern(10007, 3);
  Crc32 pieces;
  for (std::size_t at = 0; at < data.size(); at += 333) {
    pieces.update(Bytes(data).subspan(at, std::min<std::size_t>(333, data.size() - at)));
  }
  EXPECT_EQ(pieces.value(), crc32(data));
  EXPECT_EQ(crc32({}), 0U);
}

/// The CRC bit by bit, straight from the definition: what both the table and the carry-less multiply paths must
/// give.
std::uint32_t reference_crc(Bytes bytes) {
  std::uint32_t crc = 0xFFFFFFFFU;
  for (const std::uint8_t b : bytes) {
    crc ^= b;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 1U) != 0 ? (crc >> 1) ^ 0xEDB88320U : crc >> 1;
    }
  }
  return crc ^ 0xFFFFFFFFU;
}

TEST(McapCrc32, MatchesTheBitwiseDefinitionForEveryLengthAndAlignment) {
  // Lengths around the 16- and 64-byte folds of the fast path, at every offset of a 16-byte line, and pieces
  // that start unaligned after a short one.
  const std::vector<std::uint8_t> data = test::pattern(70000, 11);
  for (std::size_t offset = 0; offset < 16; ++offset) {
    for (std::size_t length : {0, 1, 15, 16, 17, 63, 64, 65, 79, 80, 127, 128, 129, 200, 1000, 4096, 65537}) {
      const Bytes bytes = Bytes(data).subspan(offset, length);
      ASSERT_EQ(crc32(bytes), reference_crc(bytes)) << "offset " << offset << " length " << length;
    }
  }
  Crc32 pieces;
  pieces.update(Bytes(data).subspan(0, 31));
  pieces.update(Bytes(data).subspan(31, 65536));
  EXPECT_EQ(pieces.value(), reference_crc(Bytes(data).subspan(0, 31 + 65536)));
}

TEST(McapCrc32, AppendingAPiecesCrcEqualsUpdatingWithItsBytes) {
  const std::vector<std::uint8_t> data = test::pattern(100000, 5);
  for (std::size_t split : {0, 1, 31, 4096, 99999, 100000}) {
    Crc32 read_twice;
    read_twice.update(data);
    Crc32 sut;
    sut.update(Bytes(data).subspan(0, split));
    sut.append(crc32(Bytes(data).subspan(split)), data.size() - split);
    EXPECT_EQ(sut.value(), read_twice.value()) << "split " << split;
  }
}

class McapCompression : public ::testing::TestWithParam<Compression> {};

TEST_P(McapCompression, StreamFedInPiecesDecompressesToTheSameBytes) {
  auto sut = ChunkCompressor::create(GetParam(), 1);
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  std::vector<std::uint8_t> all;
  for (int round = 0; round < 2; ++round) {  // the compressor is reused chunk after chunk
    all.clear();
    ASSERT_TRUE((*sut)->begin().ok());
    for (std::uint32_t piece = 0; piece < 50; ++piece) {
      const std::vector<std::uint8_t> bytes = test::pattern(piece * 97 % 5000, piece % 5);
      all.insert(all.end(), bytes.begin(), bytes.end());
      ASSERT_TRUE((*sut)->feed(bytes).ok());
    }
    ASSERT_TRUE((*sut)->finish().ok());
    std::vector<std::uint8_t> back(all.size());

    auto r = decompress(GetParam(), (*sut)->output(), back);

    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(back, all);
  }
}

TEST_P(McapCompression, RefusesAStreamLargerOrSmallerThanDeclared) {
  auto sut = ChunkCompressor::create(GetParam(), 1);
  ASSERT_TRUE(sut.ok());
  const std::vector<std::uint8_t> bytes = test::pattern(4000, 1);
  ASSERT_TRUE((*sut)->begin().ok());
  ASSERT_TRUE((*sut)->feed(bytes).ok());
  ASSERT_TRUE((*sut)->finish().ok());

  std::vector<std::uint8_t> too_small(bytes.size() - 1);
  std::vector<std::uint8_t> too_large(bytes.size() + 1);
  EXPECT_FALSE(decompress(GetParam(), (*sut)->output(), too_small).ok());
  EXPECT_FALSE(decompress(GetParam(), (*sut)->output(), too_large).ok());
}

INSTANTIATE_TEST_SUITE_P(AllCompressions, McapCompression, ::testing::ValuesIn(test::kAllCompressions),
                         [](const auto& info) { return test::compression_test_name(info.param); });

TEST(McapCompressionStreams, RefuseCorruptBytesWithAMessage) {
  const std::vector<std::uint8_t> garbage = test::pattern(300, 9);
  std::vector<std::uint8_t> out(1000);
  auto lz4 = decompress(Compression::kLz4, garbage, out);
  ASSERT_FALSE(lz4.ok());
  EXPECT_NE(std::string(lz4.error().message()).find("lz4 chunk"), std::string::npos);
  auto zstd = decompress(Compression::kZstd, garbage, out);
  ASSERT_FALSE(zstd.ok());
  EXPECT_NE(std::string(zstd.error().message()).find("zstd chunk"), std::string::npos);
  auto unknown = parse_compression("bz2");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message(), "unknown MCAP chunk compression 'bz2': axon reads none, lz4 and zstd");
}

}  // namespace
}  // namespace axon::mcap
