// Decoding of the MCAP records (records.hpp). Every length read from a file is untrusted: each field is
// checked against what is left of the record before it is read, and a record must be consumed exactly.
#include <string_view>

#include "src/tools/mcap/records.hpp"

namespace axon::mcap {
namespace {

// Reads fields from a record's content; the first field that does not fit stops it and names itself.
class Fields {
 public:
  Fields(Bytes content, const char* record) : content_(content), record_(record) {}

  template <class T>
  T get(const char* field) {
    T value{};
    if (!take(sizeof(T), field)) {
      return value;
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      v |= static_cast<std::uint64_t>(content_[at_ + i]) << (8 * i);
    }
    at_ += sizeof(T);
    return static_cast<T>(v);
  }

  Bytes bytes(std::uint64_t length, const char* field) {
    if (!take(length, field)) {
      return {};
    }
    const Bytes out = content_.subspan(at_, static_cast<std::size_t>(length));
    at_ += static_cast<std::size_t>(length);
    return out;
  }

  std::string string(const char* field) {
    const auto length = get<std::uint32_t>(field);
    const Bytes text = bytes(length, field);
    return {reinterpret_cast<const char*>(text.data()), text.size()};
  }

  // A map or array: its u32 byte length, then entries read by `entry` until exactly that many bytes are used.
  template <class Entry>
  void entries(const char* field, Entry entry) {
    const auto length = get<std::uint32_t>(field);
    if (!take(length, field)) {
      return;
    }
    const std::size_t end = at_ + length;
    while (ok() && at_ < end) {
      entry();
    }
    if (ok() && at_ != end) {
      fail(field, "entries overrun the length in front of them");
    }
  }

  StringMap string_map(const char* field) {
    StringMap map;
    entries(field, [&] {
      std::string key = string(field);
      std::string value = string(field);
      map.emplace_back(std::move(key), std::move(value));
    });
    return map;
  }

  template <class Key, class Value>
  std::vector<std::pair<Key, Value>> pairs(const char* field) {
    std::vector<std::pair<Key, Value>> out;
    entries(field, [&] {
      const auto key = get<Key>(field);
      const auto value = get<Value>(field);
      out.emplace_back(key, value);
    });
    return out;
  }

  Bytes rest() {
    const Bytes out = content_.subspan(at_);
    at_ = content_.size();
    return out;
  }

  [[nodiscard]] bool ok() const { return error_.empty(); }

  // The decoded record, or what was wrong. Bytes left over are allowed: the spec lets records grow fields.
  template <class T>
  Result<T> finish(T value) {
    if (!ok()) {
      return Error(ErrorCode::kMalformed, error_);
    }
    return value;
  }

 private:
  bool take(std::uint64_t length, const char* field) {
    if (!ok()) {
      return false;
    }
    if (length > content_.size() - at_) {
      fail(field, "needs " + std::to_string(length) + " bytes, the record has " +
                      std::to_string(content_.size() - at_) + " left");
      return false;
    }
    return true;
  }

  void fail(const char* field, const std::string& what) {
    error_ = std::string("MCAP ") + record_ + " record: field '" + field + "' " + what +
             " (the file is corrupt or cut short)";
  }

  Bytes content_;
  std::size_t at_ = 0;
  const char* record_;
  std::string error_;
};

}  // namespace

Result<RecordView> next_record(Bytes buffer, std::size_t offset) {
  if (offset > buffer.size() || buffer.size() - offset < kRecordPrefixBytes) {
    return Error(ErrorCode::kMalformed, "MCAP record at offset " + std::to_string(offset) +
                                            ": fewer than 9 bytes left for its opcode and length (cut short)");
  }
  Fields fields(buffer.subspan(offset), "prefix of a");
  const auto opcode = fields.get<std::uint8_t>("opcode");
  const auto length = fields.get<std::uint64_t>("length");
  if (opcode == 0) {
    return Error(ErrorCode::kMalformed, "MCAP record at offset " + std::to_string(offset) +
                                            ": opcode 0 is reserved (zeroed or corrupt bytes)");
  }
  if (length > buffer.size() - offset - kRecordPrefixBytes) {
    return Error(ErrorCode::kMalformed, "MCAP record at offset " + std::to_string(offset) + " (opcode " +
                                            std::to_string(opcode) + ") declares " + std::to_string(length) +
                                            " bytes, only " +
                                            std::to_string(buffer.size() - offset - kRecordPrefixBytes) +
                                            " follow (cut short or corrupt length)");
  }
  return RecordView{.opcode = static_cast<Opcode>(opcode),
                    .content = buffer.subspan(offset + kRecordPrefixBytes, static_cast<std::size_t>(length)),
                    .total_bytes = kRecordPrefixBytes + static_cast<std::size_t>(length)};
}

Result<Header> decode_header(Bytes content) {
  Fields f(content, "Header");
  Header r;
  r.profile = f.string("profile");
  r.library = f.string("library");
  return f.finish(std::move(r));
}

Result<Footer> decode_footer(Bytes content) {
  Fields f(content, "Footer");
  Footer r;
  r.summary_start = f.get<std::uint64_t>("summary_start");
  r.summary_offset_start = f.get<std::uint64_t>("summary_offset_start");
  r.summary_crc = f.get<std::uint32_t>("summary_crc");
  return f.finish(r);
}

Result<Schema> decode_schema(Bytes content) {
  Fields f(content, "Schema");
  Schema r;
  r.id = f.get<std::uint16_t>("id");
  r.name = f.string("name");
  r.encoding = f.string("encoding");
  const Bytes data = f.bytes(f.get<std::uint32_t>("data"), "data");
  r.data.assign(data.begin(), data.end());
  return f.finish(std::move(r));
}

Result<Channel> decode_channel(Bytes content) {
  Fields f(content, "Channel");
  Channel r;
  r.id = f.get<std::uint16_t>("id");
  r.schema_id = f.get<std::uint16_t>("schema_id");
  r.topic = f.string("topic");
  r.message_encoding = f.string("message_encoding");
  r.metadata = f.string_map("metadata");
  return f.finish(std::move(r));
}

Result<Message> decode_message(Bytes content) {
  Fields f(content, "Message");
  Message r;
  r.header.channel_id = f.get<std::uint16_t>("channel_id");
  r.header.sequence = f.get<std::uint32_t>("sequence");
  r.header.log_time = f.get<std::uint64_t>("log_time");
  r.header.publish_time = f.get<std::uint64_t>("publish_time");
  r.data = f.rest();
  return f.finish(r);
}

Result<Chunk> decode_chunk(Bytes content) {
  Fields f(content, "Chunk");
  Chunk r;
  r.message_start_time = f.get<std::uint64_t>("message_start_time");
  r.message_end_time = f.get<std::uint64_t>("message_end_time");
  r.uncompressed_size = f.get<std::uint64_t>("uncompressed_size");
  r.uncompressed_crc = f.get<std::uint32_t>("uncompressed_crc");
  r.compression = f.string("compression");
  r.records = f.bytes(f.get<std::uint64_t>("records"), "records");
  return f.finish(std::move(r));
}

Result<MessageIndex> decode_message_index(Bytes content) {
  Fields f(content, "MessageIndex");
  MessageIndex r;
  r.channel_id = f.get<std::uint16_t>("channel_id");
  r.records = f.pairs<std::uint64_t, std::uint64_t>("records");
  return f.finish(std::move(r));
}

Result<ChunkIndex> decode_chunk_index(Bytes content) {
  Fields f(content, "ChunkIndex");
  ChunkIndex r;
  r.message_start_time = f.get<std::uint64_t>("message_start_time");
  r.message_end_time = f.get<std::uint64_t>("message_end_time");
  r.chunk_start_offset = f.get<std::uint64_t>("chunk_start_offset");
  r.chunk_length = f.get<std::uint64_t>("chunk_length");
  r.message_index_offsets = f.pairs<std::uint16_t, std::uint64_t>("message_index_offsets");
  r.message_index_length = f.get<std::uint64_t>("message_index_length");
  r.compression = f.string("compression");
  r.compressed_size = f.get<std::uint64_t>("compressed_size");
  r.uncompressed_size = f.get<std::uint64_t>("uncompressed_size");
  return f.finish(std::move(r));
}

Result<Statistics> decode_statistics(Bytes content) {
  Fields f(content, "Statistics");
  Statistics r;
  r.message_count = f.get<std::uint64_t>("message_count");
  r.schema_count = f.get<std::uint16_t>("schema_count");
  r.channel_count = f.get<std::uint32_t>("channel_count");
  r.attachment_count = f.get<std::uint32_t>("attachment_count");
  r.metadata_count = f.get<std::uint32_t>("metadata_count");
  r.chunk_count = f.get<std::uint32_t>("chunk_count");
  r.message_start_time = f.get<std::uint64_t>("message_start_time");
  r.message_end_time = f.get<std::uint64_t>("message_end_time");
  r.channel_message_counts = f.pairs<std::uint16_t, std::uint64_t>("channel_message_counts");
  return f.finish(std::move(r));
}

Result<Metadata> decode_metadata(Bytes content) {
  Fields f(content, "Metadata");
  Metadata r;
  r.name = f.string("name");
  r.metadata = f.string_map("metadata");
  return f.finish(std::move(r));
}

Result<MetadataIndex> decode_metadata_index(Bytes content) {
  Fields f(content, "MetadataIndex");
  MetadataIndex r;
  r.offset = f.get<std::uint64_t>("offset");
  r.length = f.get<std::uint64_t>("length");
  r.name = f.string("name");
  return f.finish(std::move(r));
}

Result<SummaryOffset> decode_summary_offset(Bytes content) {
  Fields f(content, "SummaryOffset");
  SummaryOffset r;
  r.group_opcode = static_cast<Opcode>(f.get<std::uint8_t>("group_opcode"));
  r.group_start = f.get<std::uint64_t>("group_start");
  r.group_length = f.get<std::uint64_t>("group_length");
  return f.finish(r);
}

Result<DataEnd> decode_data_end(Bytes content) {
  Fields f(content, "DataEnd");
  DataEnd r;
  r.data_section_crc = f.get<std::uint32_t>("data_section_crc");
  return f.finish(r);
}

}  // namespace axon::mcap
