// Reads an MCAP file. open() reads the summary through the footer (its CRC checked) when the file has one;
// when it has none, or it is corrupt, it scans the data section record by record up to the first record
// that is cut short or corrupt, so a file whose writer stopped anywhere reads up to its last complete
// chunk. messages() iterates messages in log-time order across chunks (chunks that overlap in time are
// merged). Every length, offset and count read from the file is checked against the file and the record
// that holds it before use; a chunk decompresses into at most its declared size, itself bounded by
// ReaderOptions::max_chunk_bytes.
//
// Thread safety: one thread uses a reader and its cursors. The one exception is read_chunk_into(), which changes
// nothing (pread on the file, then local work): a cursor's read-ahead thread calls it while its owner reads on.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "src/tools/mcap/message_cursor.hpp"
#include "src/tools/mcap/records.hpp"
#include "src/tools/mcap/summary.hpp"

namespace axon::mcap {

struct ReaderOptions {
  bool verify_crcs = true;
  /// A chunk that declares more uncompressed bytes is refused.
  std::uint64_t max_chunk_bytes = std::uint64_t{1} << 30;
  /// false: scan the data section even when the file has a summary.
  bool use_summary = true;
};

class Reader {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Reader>> open(const std::string& path, ReaderOptions options = {});
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  ~Reader();

  [[nodiscard]] const Header& header() const noexcept { return header_; }
  /// The file's summary was read (false: the data section was scanned; scan_note() says why).
  [[nodiscard]] bool summary_used() const noexcept { return summary_used_; }
  [[nodiscard]] const std::string& scan_note() const noexcept { return scan_note_; }
  /// Schemas, channels (including those found in chunks read so far), chunk and metadata indexes, statistics.
  [[nodiscard]] const Summary& summary() const noexcept { return summary_; }
  /// Scanned files: where the last complete record of the data section ends.
  [[nodiscard]] std::uint64_t scan_end() const noexcept { return scan_end_; }
  /// Scanned files: the data section ended with DataEnd (the writer finished it).
  [[nodiscard]] bool data_end_seen() const noexcept { return data_end_seen_; }
  [[nodiscard]] std::uint64_t file_bytes() const noexcept { return size_; }
  [[nodiscard]] const ReaderOptions& options() const noexcept { return options_; }

  /// Reads, decompresses and checks the chunk `index` names; schemas and channels inside it are added.
  [[nodiscard]] Result<LoadedChunk> load_chunk(const ChunkIndex& index);
  /// load_chunk() without adding what it finds (the chunk's `schemas` and `channels`) into `into`, reusing its
  /// buffers: safe from another thread while this one uses the reader.
  [[nodiscard]] Result<void> read_chunk_into(const ChunkIndex& index, LoadedChunk& into) const;
  /// Adds the schemas and channels that read_chunk_into() found in a chunk.
  void adopt(const LoadedChunk& chunk);
  /// The file's bytes [offset, offset + length), refused when they lie outside the file.
  [[nodiscard]] Result<std::vector<std::uint8_t>> read(std::uint64_t offset, std::uint64_t length) const;
  /// The file's bytes [offset, offset + out.size()) into `out`.
  [[nodiscard]] Result<void> read_into(std::uint64_t offset, std::span<std::uint8_t> out) const;
  /// Messages in log-time order; `read_ahead_chunks` > 0: a thread of the cursor's own reads that many chunks
  /// ahead (message_cursor.hpp).
  [[nodiscard]] MessageCursor messages(std::size_t read_ahead_chunks = 0) { return {*this, read_ahead_chunks}; }

 private:
  Reader(int fd, std::string path, std::uint64_t size, ReaderOptions options);
  /// [offset, offset + length) lies inside the file, or the error naming both.
  [[nodiscard]] Result<void> check_within(std::uint64_t offset, std::uint64_t length) const;
  [[nodiscard]] Result<void> read_header();
  [[nodiscard]] Result<void> read_summary();
  [[nodiscard]] Result<void> scan();
  void add_schema(Schema schema);
  void add_channel(Channel channel);

  int fd_;
  std::string path_;
  std::uint64_t size_;
  ReaderOptions options_;
  Header header_;
  std::uint64_t data_start_ = 0;  // after the magic and the header
  Summary summary_;
  bool summary_used_ = false;
  std::string scan_note_;
  std::uint64_t scan_end_ = 0;
  bool data_end_seen_ = false;
};

}  // namespace axon::mcap
