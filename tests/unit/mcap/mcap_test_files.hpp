// Shared by the MCAP tests: a temporary directory, a deterministic test recording written with axon's writer,
// and the one-line JSON description that tests/mcap_js/check.js prints, built from what a test wrote or read.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "src/tools/mcap/reader.hpp"
#include "src/tools/mcap/writer.hpp"

namespace axon::mcap::test {

/// A directory under /tmp removed with what it holds when the object goes.
class TempDir {
 public:
  TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  [[nodiscard]] std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// One message as a test expects to read it back.
struct WrittenMessage {
  MessageHeader header;
  std::vector<std::uint8_t> payload;
};

/// What a recording holds, in the shape check.js describes it.
struct Recording {
  Header header;
  std::vector<Schema> schemas;
  std::vector<Channel> channels;
  std::vector<WrittenMessage> messages;
  std::vector<std::string> compressions;  ///< One per chunk.
  bool summary = true;
};

/// Every compression a chunk can have, and a test name for each ("none", "lz4", "zstd").
inline constexpr std::array<Compression, 3> kAllCompressions = {Compression::kNone, Compression::kLz4,
                                                                Compression::kZstd};
[[nodiscard]] std::string compression_test_name(Compression compression);

/// Deterministic payload bytes.
[[nodiscard]] std::vector<std::uint8_t> pattern(std::size_t bytes, std::uint32_t seed);

/// Writes `message_count` messages on three channels (two schemas, one channel without) with `options`; log
/// times go up but two channels interleave so that chunks overlap in time. Returns what was written.
[[nodiscard]] Recording write_recording(const std::string& path, const WriterOptions& options,
                                        std::size_t message_count);

/// Reads `path` with axon's reader: every message in log-time order, schemas, channels, chunk compressions.
[[nodiscard]] Result<Recording> read_recording(const std::string& path, ReaderOptions options = {});

/// check.js's JSON for `recording` (data_crc_ok given by the caller: "true" or "null").
[[nodiscard]] std::string describe(const Recording& recording, const std::string& data_crc_ok);

}  // namespace axon::mcap::test
