// Writes an MCAP file: header, schemas and channels as they are added, messages in chunks (none, lz4 or
// zstd) each followed by its message indexes, metadata, then DataEnd, the summary and the footer.
//
// Zero-copy contract. add_message() takes the payload as a span the caller owns and never copies it into a
// buffer of the writer's:
//   - compressed chunks: the payload goes from the caller's memory straight into the compressor; when
//     add_message() returns, the writer no longer needs it;
//   - uncompressed chunks: the writer keeps a pointer to it and writes it with writev() when the chunk is
//     full (chunk_bytes or chunk_messages), at flush() or at close(); until then the caller must keep the
//     bytes alive (the file gets them as they are then: the chunk's CRC is computed when it is written).
// Each of add_message(), flush() and close() returns how many of the payloads not yet released (counted in
// the order they were added, the one just added included) the writer released by that call: the caller may
// free that many of its oldest held payloads. held_payloads() says how many it holds; never more than
// chunk_messages. After an error the writer holds none and refuses further calls.
//
// Crash safety: every record is written whole, chunk by chunk, so a file cut anywhere (a killed process, a
// full disk) reads up to its last complete chunk; recover() (recover.hpp) gives it a summary again.
//
// Thread safety: none; one thread uses a writer. Allocates while its buffers grow to the largest chunk.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/tools/mcap/compression.hpp"
#include "src/tools/mcap/crc32.hpp"
#include "src/tools/mcap/file_sink.hpp"
#include "src/tools/mcap/records.hpp"
#include "src/tools/mcap/summary.hpp"

namespace axon::mcap {

struct WriterOptions {
  Compression compression = Compression::kZstd;
  int zstd_level = 1;
  /// A chunk is written once its uncompressed records reach this size.
  std::uint64_t chunk_bytes = std::uint64_t{4} << 20;
  /// ... or once it holds this many messages (bounds the payloads an uncompressed writer holds).
  std::size_t chunk_messages = 1024;
  /// Write the summary section (false: DataEnd and a footer that names no summary).
  bool summary = true;
  /// Compute chunk CRCs and the data section CRC.
  bool crcs = true;
  std::string profile;
  std::string library = "axon";
};

class Writer {
 public:
  /// Creates `path` and writes the magic and the header.
  [[nodiscard]] static Result<std::unique_ptr<Writer>> create(const std::string& path, WriterOptions options = {});
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer() = default;

  /// Writes a Schema record; returns its id (1, 2, ...).
  [[nodiscard]] Result<std::uint16_t> add_schema(std::string name, std::string encoding, Bytes data);
  /// Writes a Channel record; returns its id (0, 1, ...). `schema_id` 0: no schema.
  [[nodiscard]] Result<std::uint16_t> add_channel(std::uint16_t schema_id, std::string topic,
                                                  std::string message_encoding, StringMap metadata = {});
  /// Adds a message to the current chunk (see the contract above); returns how many payloads it released.
  [[nodiscard]] Result<std::size_t> add_message(const MessageHeader& header, Bytes payload);
  /// Writes a Metadata record.
  [[nodiscard]] Result<void> add_metadata(const Metadata& metadata);
  /// Writes the current chunk now; returns how many payloads that released.
  [[nodiscard]] Result<std::size_t> flush();
  /// Writes the last chunk, DataEnd, the summary (if asked) and the footer, and closes the file.
  [[nodiscard]] Result<std::size_t> close();

  [[nodiscard]] std::size_t held_payloads() const noexcept { return payloads_.size(); }
  [[nodiscard]] std::uint64_t bytes_written() const noexcept { return sink_.offset(); }
  [[nodiscard]] const Statistics& statistics() const noexcept { return summary_.statistics; }

 private:
  Writer(FileSink sink, WriterOptions options, std::unique_ptr<ChunkCompressor> compressor);
  [[nodiscard]] Result<void> write_record_bytes(const std::vector<std::uint8_t>& bytes);
  [[nodiscard]] Result<void> write_chunk();
  [[nodiscard]] Result<void> write_message_indexes(ChunkIndex& index);
  [[nodiscard]] Result<void> usable() const;
  Error fail(Error error);

  FileSink sink_;
  WriterOptions options_;
  std::unique_ptr<ChunkCompressor> compressor_;  // null for uncompressed chunks
  Crc32 data_crc_;
  Summary summary_;
  std::vector<std::uint64_t> channel_counts_;  // by channel id
  bool failed_ = false;
  bool closed_ = false;

  // The open chunk.
  std::uint64_t chunk_start_time_ = 0;
  std::uint64_t chunk_end_time_ = 0;
  std::uint64_t chunk_records_bytes_ = 0;
  std::size_t chunk_messages_ = 0;
  Crc32 chunk_crc_;
  std::vector<MessageIndex> indexes_;            // by channel id; records of the open chunk
  std::vector<std::uint16_t> indexed_channels_;  // channels with messages in the open chunk
  // Uncompressed chunks: the record prefixes (kMessagePrefixBytes each) and the caller's payloads.
  std::vector<std::uint8_t> prefixes_;
  std::vector<Bytes> payloads_;
  std::vector<iovec> iov_;
  std::vector<std::uint8_t> scratch_;  // chunk prefix, message indexes, other records
};

}  // namespace axon::mcap
