// The MCAP records (https://mcap.dev/spec): their opcodes, their fields, and how each is encoded and decoded.
// A record is opcode (u8), content length (u64), content; integers are little-endian, a string or a byte
// array is a u32 length then the bytes, a map or an array is a u32 byte length then its entries.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "axon/result.hpp"

namespace axon::mcap {

using Bytes = std::span<const std::uint8_t>;

/// The 8 bytes at the start and at the end of every MCAP file (version '0').
inline constexpr std::array<std::uint8_t, 8> kMagic = {0x89, 'M', 'C', 'A', 'P', 0x30, '\r', '\n'};
/// Opcode and content length in front of every record.
inline constexpr std::size_t kRecordPrefixBytes = 9;

enum class Opcode : std::uint8_t {
  kHeader = 0x01,
  kFooter = 0x02,
  kSchema = 0x03,
  kChannel = 0x04,
  kMessage = 0x05,
  kChunk = 0x06,
  kMessageIndex = 0x07,
  kChunkIndex = 0x08,
  kAttachment = 0x09,
  kAttachmentIndex = 0x0A,
  kStatistics = 0x0B,
  kMetadata = 0x0C,
  kMetadataIndex = 0x0D,
  kSummaryOffset = 0x0E,
  kDataEnd = 0x0F,
};

/// A string-to-string map in the order it was written (the spec's Map<string, string>).
using StringMap = std::vector<std::pair<std::string, std::string>>;

struct Header {
  std::string profile;
  std::string library;
};

struct Footer {
  std::uint64_t summary_start = 0;         ///< 0: no summary section.
  std::uint64_t summary_offset_start = 0;  ///< 0: no summary offset section.
  std::uint32_t summary_crc = 0;           ///< 0: not computed.
};
/// A footer record's size: prefix and three fields (it is the last record, just before the closing magic).
inline constexpr std::size_t kFooterRecordBytes = kRecordPrefixBytes + 8 + 8 + 4;

struct Schema {
  std::uint16_t id = 0;  ///< 0 is reserved (a channel without schema).
  std::string name;
  std::string encoding;
  std::vector<std::uint8_t> data;
};

struct Channel {
  std::uint16_t id = 0;
  std::uint16_t schema_id = 0;
  std::string topic;
  std::string message_encoding;
  StringMap metadata;
};

/// A Message record's fixed fields; its payload is the rest of the record.
struct MessageHeader {
  std::uint16_t channel_id = 0;
  std::uint32_t sequence = 0;
  std::uint64_t log_time = 0;
  std::uint64_t publish_time = 0;
};
inline constexpr std::size_t kMessageFieldsBytes = 2 + 4 + 8 + 8;
/// Opcode, length and the fixed fields: what precedes a payload in the file.
inline constexpr std::size_t kMessagePrefixBytes = kRecordPrefixBytes + kMessageFieldsBytes;

struct Message {
  MessageHeader header;
  Bytes data;  ///< Points into the buffer the record was decoded from.
};

/// A Chunk record's fields; `records` points into the buffer it was decoded from.
struct Chunk {
  std::uint64_t message_start_time = 0;
  std::uint64_t message_end_time = 0;
  std::uint64_t uncompressed_size = 0;
  std::uint32_t uncompressed_crc = 0;  ///< 0: not computed.
  std::string compression;             ///< "", "lz4" or "zstd".
  Bytes records;
};

struct MessageIndex {
  std::uint16_t channel_id = 0;
  /// (log time, offset of the Message record in the chunk's uncompressed records).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> records;
};

struct ChunkIndex {
  std::uint64_t message_start_time = 0;
  std::uint64_t message_end_time = 0;
  std::uint64_t chunk_start_offset = 0;  ///< File offset of the Chunk record's opcode.
  std::uint64_t chunk_length = 0;        ///< Of the whole Chunk record.
  std::vector<std::pair<std::uint16_t, std::uint64_t>> message_index_offsets;  ///< Channel id, file offset.
  std::uint64_t message_index_length = 0;  ///< Bytes of the MessageIndex records after the chunk.
  std::string compression;
  std::uint64_t compressed_size = 0;  ///< Of the chunk's records field.
  std::uint64_t uncompressed_size = 0;
};

struct Statistics {
  std::uint64_t message_count = 0;
  std::uint16_t schema_count = 0;
  std::uint32_t channel_count = 0;
  std::uint32_t attachment_count = 0;
  std::uint32_t metadata_count = 0;
  std::uint32_t chunk_count = 0;
  std::uint64_t message_start_time = 0;
  std::uint64_t message_end_time = 0;
  std::vector<std::pair<std::uint16_t, std::uint64_t>> channel_message_counts;
};

struct Metadata {
  std::string name;
  StringMap metadata;
};

struct MetadataIndex {
  std::uint64_t offset = 0;  ///< File offset of the Metadata record.
  std::uint64_t length = 0;  ///< Of the whole Metadata record.
  std::string name;
};

struct SummaryOffset {
  Opcode group_opcode = Opcode::kSchema;
  std::uint64_t group_start = 0;
  std::uint64_t group_length = 0;
};

struct DataEnd {
  std::uint32_t data_section_crc = 0;  ///< 0: not computed.
};

/// One record as found in a buffer: its opcode and its content (bounds already checked).
struct RecordView {
  Opcode opcode = Opcode::kHeader;
  Bytes content;
  std::size_t total_bytes = 0;  ///< Prefix plus content.
};

/// The record at `offset` of `buffer`, refused when the buffer holds less than its prefix or its declared
/// length (a cut file or a corrupt length).
[[nodiscard]] Result<RecordView> next_record(Bytes buffer, std::size_t offset);

/// Encoders: each appends one whole record (prefix and content) to `out`.
void encode(const Header& record, std::vector<std::uint8_t>& out);
void encode(const Footer& record, std::vector<std::uint8_t>& out);
void encode(const Schema& record, std::vector<std::uint8_t>& out);
void encode(const Channel& record, std::vector<std::uint8_t>& out);
void encode(const Message& record, std::vector<std::uint8_t>& out);
void encode(const Chunk& record, std::vector<std::uint8_t>& out);
void encode(const MessageIndex& record, std::vector<std::uint8_t>& out);
void encode(const ChunkIndex& record, std::vector<std::uint8_t>& out);
void encode(const Statistics& record, std::vector<std::uint8_t>& out);
void encode(const Metadata& record, std::vector<std::uint8_t>& out);
void encode(const MetadataIndex& record, std::vector<std::uint8_t>& out);
void encode(const SummaryOffset& record, std::vector<std::uint8_t>& out);
void encode(const DataEnd& record, std::vector<std::uint8_t>& out);

/// A Message record's prefix and fixed fields for a payload of `payload_bytes` (the payload is not copied).
void encode_message_prefix(const MessageHeader& header, std::uint64_t payload_bytes,
                           std::span<std::uint8_t, kMessagePrefixBytes> out) noexcept;
/// A Chunk record's prefix and fields up to and including the records length, for `records_bytes` of records.
void encode_chunk_prefix(const Chunk& fields, std::uint64_t records_bytes, std::vector<std::uint8_t>& out);

/// Decoders: each takes a record's content (RecordView::content) and refuses what does not fit it, saying
/// which record and field was wrong.
[[nodiscard]] Result<Header> decode_header(Bytes content);
[[nodiscard]] Result<Footer> decode_footer(Bytes content);
[[nodiscard]] Result<Schema> decode_schema(Bytes content);
[[nodiscard]] Result<Channel> decode_channel(Bytes content);
[[nodiscard]] Result<Message> decode_message(Bytes content);
[[nodiscard]] Result<Chunk> decode_chunk(Bytes content);
[[nodiscard]] Result<MessageIndex> decode_message_index(Bytes content);
[[nodiscard]] Result<ChunkIndex> decode_chunk_index(Bytes content);
[[nodiscard]] Result<Statistics> decode_statistics(Bytes content);
[[nodiscard]] Result<Metadata> decode_metadata(Bytes content);
[[nodiscard]] Result<MetadataIndex> decode_metadata_index(Bytes content);
[[nodiscard]] Result<SummaryOffset> decode_summary_offset(Bytes content);
[[nodiscard]] Result<DataEnd> decode_data_end(Bytes content);

}  // namespace axon::mcap
