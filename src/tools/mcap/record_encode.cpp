// Encoding of the MCAP records (records.hpp): little-endian fields appended to a byte vector.
#include <cstring>

#include "src/tools/mcap/records.hpp"

namespace axon::mcap {
namespace {

template <class T>
void put(std::vector<std::uint8_t>& out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(value) >> (8 * i)));
  }
}

template <class T>
void put_at(std::uint8_t* at, T value) noexcept {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    at[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(value) >> (8 * i));
  }
}

void put_string(std::vector<std::uint8_t>& out, const std::string& text) {
  put(out, static_cast<std::uint32_t>(text.size()));
  out.insert(out.end(), text.begin(), text.end());
}

// A map or an array: its byte length in front of its entries, patched once they are written.
class LengthPrefixed {
 public:
  explicit LengthPrefixed(std::vector<std::uint8_t>& out) : out_(out), at_(out.size()) { put(out, std::uint32_t{0}); }
  LengthPrefixed(const LengthPrefixed&) = delete;
  LengthPrefixed& operator=(const LengthPrefixed&) = delete;
  ~LengthPrefixed() { put_at(out_.data() + at_, static_cast<std::uint32_t>(out_.size() - at_ - 4)); }

 private:
  std::vector<std::uint8_t>& out_;
  std::size_t at_;
};

void put_map(std::vector<std::uint8_t>& out, const StringMap& map) {
  const LengthPrefixed length(out);
  for (const auto& [key, value] : map) {
    put_string(out, key);
    put_string(out, value);
  }
}

template <class Key, class Value>
void put_pairs(std::vector<std::uint8_t>& out, const std::vector<std::pair<Key, Value>>& pairs) {
  const LengthPrefixed length(out);
  for (const auto& [key, value] : pairs) {
    put(out, key);
    put(out, value);
  }
}

// Opcode and a content length patched when the record is complete.
class Record {
 public:
  Record(std::vector<std::uint8_t>& out, Opcode opcode) : out_(out), at_(out.size()) {
    out.push_back(static_cast<std::uint8_t>(opcode));
    put(out, std::uint64_t{0});
  }
  Record(const Record&) = delete;
  Record& operator=(const Record&) = delete;
  ~Record() { put_at(out_.data() + at_ + 1, static_cast<std::uint64_t>(out_.size() - at_ - kRecordPrefixBytes)); }

 private:
  std::vector<std::uint8_t>& out_;
  std::size_t at_;
};

}  // namespace

void encode(const Header& record, std::vector<std::uint8_t>& out) {
  const Record r(out, Opcode::kHeader);
  put_string(out, record.profile);
  put_string(out, record.library);
}

void encode(const Footer& record, std::vector<std::uint8_t>& out) {
  const Record r(out, Opcode::kFooter);
  put(out, record.summary_start);
  put(out, record.summary_offset_start);
  put(out, record.summary_crc);
}

void encode(const Schema& record, std::vector<std::uint8_t>& out) {
  const Record r(out, Opcode::kSchema);
  put(out, record.id);
  put_string(out, record.name);
  put_string(out, record.encoding);
  put(out, static_cast<std::uint32_t>(record.data.size()));
  out.insert(out.end(), record.data.begin(), record.data.end());
}

void encode(const Channel& record, std::vector<std::uint8_t>& out) {
  const Record r(out, Opcode::kChannel);
  put(out, record.id);
  put(out, record.schema_id);
  put_string(out, record.topic);
  put_string(out, record.message_encoding);
  put_map(out, record.metadata);
}

void encode_message_prefix(const MessageHeader& header, std::uint64_t payload_bytes,
                           std::span<std::uint8_t, kMessagePrefixBytes> out) noexcept {
  std::uint8_t* at = out.data();
  at[0] = static_cast<std::uint8_t>(Opcode::kMessage);
  put_at(at + 1, kMessageFieldsBytes + payload_bytes);
  put_at(at + 9, header.channel_id);
  put_at(at + 11, header.sequence);
  put_at(at + 15, header.log_time);
  put_at(at + 23, header.publish_time);
}

void encode(const Message& record, std::vector<std::uint8_t>& out) {
  std::array<std::uint8_t, kMessagePrefixBytes> prefix{};
  encode_message_prefix(record.header, record.data.size(), prefix);
  out.insert(out.end(), prefix.begin(), prefix.end());
  out.insert(out.end(), record.data.begin(), record.data.end());
}

void encode_chunk_prefix(const Chunk& fields, std::uint64_t records_bytes, std::vector<std::uint8_t>& out) {
  out.push_back(static_cast<std::uint8_t>(Opcode::kChunk));
  const std::uint64_t content = 8 + 8 + 8 + 4 + 4 + fields.compression.size() + 8 + records_bytes;
  put(out, content);
  put(out, fields.message_start_time);
  put(out, fields.message_end_time);
  put(out, fields.uncompressed_size);
  put(out, fields.uncompressed_crc);
  put_string(out, fields.compression);
  put(out, records_bytes);
}

void encode(const Chunk& record, std::vector<std::uint8_t>& out) {
  encode_chunk_prefix(record, record.records.size(), out);
  out.insert(out.end(), record.records.begin(), record.records.end());
}

void encode(const MessageIndex& record, std::vector<std::uint8_t>& out) {
  const Record r(out, Opcode::kMessageIndex);
  put(out, record.channel_id);
  put_pairs(out, record.records);
}

void encode(const ChunkIndex& record, std::vector<std::uint8_t>& out) {
  const Record r(out, Opcode::kChunkIndex);
  put(out, record.message_start_time);
  put(out, record.message_end_time);
  put(out, record.chunk_start_offset);
  put(out, record.chunk_length);
  put_pairs(out, record.message_index_offsets);
  put(out, record.message_index_length);
  put_string(out, record.compression);
  put(out, record.compressed_size);
  put(out, record.uncompressed_size);
}

void encode(const Statistics& record, std::vector<std::uint8_t>& out) {
  const Record r(out, Opcode::kStatistics);
  put(out, record.message_count);
  put(out, record.schema_count);
  put(out, record.channel_count);
  put(out, record.attachment_count);
  put(out, record.metadata_count);
  put(out, record.chunk_count);
  put(out, record.message_start_time);
  put(out, record.message_end_time);
  put_pairs(out, record.channel_message_counts);
}

void encode(const Metadata& record, std::vector<std::uint8_t>& out) {
  const Record r(out, Opcode::kMetadata);
  put_string(out, record.name);
  put_map(out, record.metadata);
}

void encode(const MetadataIndex& record, std::vector<std::uint8_t>& out) {
  const Record r(out, Opcode::kMetadataIndex);
  put(out, record.offset);
  put(out, record.length);
  put_string(out, record.name);
}

void encode(const SummaryOffset& record, std::vector<std::uint8_t>& out) {
  const Record r(out, Opcode::kSummaryOffset);
  put(out, static_cast<std::uint8_t>(record.group_opcode));
  put(out, record.group_start);
  put(out, record.group_length);
}

void encode(const DataEnd& record, std::vector<std::uint8_t>& out) {
  const Record r(out, Opcode::kDataEnd);
  put(out, record.data_section_crc);
}

}  // namespace axon::mcap
