// MCAP writer (writer.hpp).
#include "src/tools/mcap/writer.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace axon::mcap {

Result<std::unique_ptr<Writer>> Writer::create(const std::string& path, WriterOptions options) {
  if (options.chunk_messages == 0 || options.chunk_bytes == 0) {
    return Error(ErrorCode::kInvalidArgument, "MCAP writer: chunk_bytes and chunk_messages must be at least 1");
  }
  auto compressor = ChunkCompressor::create(options.compression, options.zstd_level);
  if (!compressor.ok()) {
    return compressor.error();
  }
  auto sink = FileSink::create(path);
  if (!sink.ok()) {
    return sink.error();
  }
  std::unique_ptr<ChunkCompressor> chunk_compressor;
  if (options.compression != Compression::kNone) {
    chunk_compressor = std::move(*compressor);
  }
  std::unique_ptr<Writer> writer(new Writer(std::move(*sink), std::move(options), std::move(chunk_compressor)));
  std::vector<std::uint8_t> start(kMagic.begin(), kMagic.end());
  encode(Header{.profile = writer->options_.profile, .library = writer->options_.library}, start);
  if (auto r = writer->write_record_bytes(start); !r.ok()) {
    return r.error();
  }
  return writer;
}

Writer::Writer(FileSink sink, WriterOptions options, std::unique_ptr<ChunkCompressor> compressor)
    : sink_(std::move(sink)), options_(std::move(options)), compressor_(std::move(compressor)) {}

Result<void> Writer::usable() const {
  if (failed_) {
    return Error(ErrorCode::kClosed, "MCAP writer of " + sink_.path() + " stopped after an earlier error");
  }
  if (closed_) {
    return Error(ErrorCode::kClosed, "MCAP writer of " + sink_.path() + " is already closed");
  }
  return {};
}

Error Writer::fail(Error error) {
  failed_ = true;
  payloads_.clear();  // the caller's payloads are its own again
  prefixes_.clear();
  return error;
}

Result<void> Writer::write_record_bytes(const std::vector<std::uint8_t>& bytes) {
  if (options_.crcs) {
    data_crc_.update(bytes);
  }
  if (auto r = sink_.write(bytes); !r.ok()) {
    return fail(r.error());
  }
  return {};
}

Result<std::uint16_t> Writer::add_schema(std::string name, std::string encoding, Bytes data) {
  if (auto r = usable(); !r.ok()) {
    return r.error();
  }
  if (summary_.schemas.size() >= std::numeric_limits<std::uint16_t>::max()) {
    return Error(ErrorCode::kLimitReached, "MCAP writer: a file holds at most 65535 schemas");
  }
  Schema schema{.id = static_cast<std::uint16_t>(summary_.schemas.size() + 1),
                .name = std::move(name),
                .encoding = std::move(encoding),
                .data = {data.begin(), data.end()}};
  scratch_.clear();
  encode(schema, scratch_);
  if (auto r = write_record_bytes(scratch_); !r.ok()) {
    return r.error();
  }
  summary_.schemas.push_back(std::move(schema));
  summary_.statistics.schema_count = static_cast<std::uint16_t>(summary_.schemas.size());
  return summary_.schemas.back().id;
}

Result<std::uint16_t> Writer::add_channel(std::uint16_t schema_id, std::string topic, std::string message_encoding,
                                          StringMap metadata) {
  if (auto r = usable(); !r.ok()) {
    return r.error();
  }
  if (schema_id > summary_.schemas.size()) {
    return Error(ErrorCode::kInvalidArgument, "MCAP writer: channel '" + topic + "' names schema " +
                                                  std::to_string(schema_id) + ", which was not added");
  }
  if (summary_.channels.size() > std::numeric_limits<std::uint16_t>::max()) {
    return Error(ErrorCode::kLimitReached, "MCAP writer: a file holds at most 65536 channels");
  }
  Channel channel{.id = static_cast<std::uint16_t>(summary_.channels.size()),
                  .schema_id = schema_id,
                  .topic = std::move(topic),
                  .message_encoding = std::move(message_encoding),
                  .metadata = std::move(metadata)};
  scratch_.clear();
  encode(channel, scratch_);
  if (auto r = write_record_bytes(scratch_); !r.ok()) {
    return r.error();
  }
  summary_.channels.push_back(std::move(channel));
  summary_.statistics.channel_count = static_cast<std::uint32_t>(summary_.channels.size());
  channel_counts_.push_back(0);
  indexes_.push_back(MessageIndex{.channel_id = summary_.channels.back().id, .records = {}});
  return summary_.channels.back().id;
}

Result<std::size_t> Writer::add_message(const MessageHeader& header, Bytes payload) {
  if (auto r = usable(); !r.ok()) {
    return r.error();
  }
  if (header.channel_id >= summary_.channels.size()) {
    return Error(ErrorCode::kInvalidArgument,
                 "MCAP writer: message on channel " + std::to_string(header.channel_id) + ", which was not added");
  }
  std::array<std::uint8_t, kMessagePrefixBytes> prefix{};
  encode_message_prefix(header, payload.size(), prefix);
  if (chunk_messages_ == 0) {
    chunk_start_time_ = header.log_time;
    chunk_end_time_ = header.log_time;
    chunk_crc_ = Crc32();
    if (compressor_) {
      if (auto r = compressor_->begin(); !r.ok()) {
        return fail(r.error());
      }
    }
  }
  std::size_t released = 0;
  if (compressor_) {
    if (options_.crcs) {  // uncompressed chunks compute theirs when written, from the bytes written
      chunk_crc_.update(prefix);
      chunk_crc_.update(payload);
    }
    if (auto r = compressor_->feed(prefix); !r.ok()) {
      return fail(r.error());
    }
    if (auto r = compressor_->feed(payload); !r.ok()) {
      return fail(r.error());
    }
    released = 1;
  } else {
    prefixes_.insert(prefixes_.end(), prefix.begin(), prefix.end());
    payloads_.push_back(payload);
  }
  MessageIndex& index = indexes_[header.channel_id];
  if (index.records.empty()) {
    indexed_channels_.push_back(header.channel_id);
  }
  index.records.emplace_back(header.log_time, chunk_records_bytes_);
  chunk_records_bytes_ += prefix.size() + payload.size();
  ++chunk_messages_;
  chunk_start_time_ = std::min(chunk_start_time_, header.log_time);
  chunk_end_time_ = std::max(chunk_end_time_, header.log_time);

  Statistics& stats = summary_.statistics;
  stats.message_start_time =
      stats.message_count == 0 ? header.log_time : std::min(stats.message_start_time, header.log_time);
  stats.message_end_time = std::max(stats.message_end_time, header.log_time);
  ++stats.message_count;
  ++channel_counts_[header.channel_id];

  if (chunk_records_bytes_ >= options_.chunk_bytes || chunk_messages_ >= options_.chunk_messages) {
    auto flushed = flush();
    if (!flushed.ok()) {
      return flushed.error();
    }
    released += *flushed;
  }
  return released;
}

Result<void> Writer::add_metadata(const Metadata& metadata) {
  if (auto r = usable(); !r.ok()) {
    return r;
  }
  scratch_.clear();
  encode(metadata, scratch_);
  const MetadataIndex index{.offset = sink_.offset(), .length = scratch_.size(), .name = metadata.name};
  if (auto r = write_record_bytes(scratch_); !r.ok()) {
    return r;
  }
  summary_.metadata_indexes.push_back(index);
  ++summary_.statistics.metadata_count;
  return {};
}

Result<std::size_t> Writer::flush() {
  if (auto r = usable(); !r.ok()) {
    return r.error();
  }
  if (chunk_messages_ == 0) {
    return std::size_t{0};
  }
  const std::size_t released = payloads_.size();
  if (auto r = write_chunk(); !r.ok()) {
    return r.error();
  }
  return released;
}

Result<void> Writer::write_chunk() {
  Bytes records;
  if (compressor_) {
    if (auto r = compressor_->finish(); !r.ok()) {
      return fail(r.error());
    }
    records = compressor_->output();
  }
  const std::uint64_t records_bytes = compressor_ ? records.size() : chunk_records_bytes_;
  if (!compressor_ && options_.crcs) {
    for (std::size_t i = 0; i < payloads_.size(); ++i) {
      chunk_crc_.update(Bytes(prefixes_).subspan(i * kMessagePrefixBytes, kMessagePrefixBytes));
      chunk_crc_.update(payloads_[i]);
    }
  }
  const Chunk fields{.message_start_time = chunk_start_time_,
                     .message_end_time = chunk_end_time_,
                     .uncompressed_size = chunk_records_bytes_,
                     .uncompressed_crc = options_.crcs ? chunk_crc_.value() : 0,
                     .compression = std::string(compression_name(options_.compression)),
                     .records = {}};
  scratch_.clear();
  encode_chunk_prefix(fields, records_bytes, scratch_);
  ChunkIndex index{.message_start_time = chunk_start_time_,
                   .message_end_time = chunk_end_time_,
                   .chunk_start_offset = sink_.offset(),
                   .chunk_length = scratch_.size() + records_bytes,
                   .message_index_offsets = {},
                   .message_index_length = 0,
                   .compression = fields.compression,
                   .compressed_size = records_bytes,
                   .uncompressed_size = chunk_records_bytes_};

  // One vectored write: the chunk prefix, then the compressed records or each message's prefix and payload.
  iov_.clear();
  const auto add = [this](Bytes bytes) {
    iov_.push_back({const_cast<std::uint8_t*>(bytes.data()), bytes.size()});  // NOLINT: writev does not write it
  };
  add(scratch_);
  if (options_.crcs) {
    data_crc_.update(scratch_);
  }
  if (compressor_) {
    add(records);
    if (options_.crcs) {
      data_crc_.update(records);
    }
  } else {
    for (std::size_t i = 0; i < payloads_.size(); ++i) {
      add(Bytes(prefixes_).subspan(i * kMessagePrefixBytes, kMessagePrefixBytes));
      add(payloads_[i]);
    }
    if (options_.crcs) {
      // The records are the chunk's uncompressed bytes, whose CRC was just computed: the data section CRC takes
      // it as it is instead of reading every payload a second time.
      data_crc_.append(chunk_crc_.value(), chunk_records_bytes_);
    }
  }
  if (auto r = sink_.writev(iov_); !r.ok()) {
    return fail(r.error());
  }
  payloads_.clear();
  prefixes_.clear();
  if (auto r = write_message_indexes(index); !r.ok()) {
    return r;
  }
  summary_.chunk_indexes.push_back(std::move(index));
  ++summary_.statistics.chunk_count;
  chunk_records_bytes_ = 0;
  chunk_messages_ = 0;
  return {};
}

Result<void> Writer::write_message_indexes(ChunkIndex& index) {
  std::sort(indexed_channels_.begin(), indexed_channels_.end());
  scratch_.clear();
  const std::uint64_t start = sink_.offset();
  for (const std::uint16_t channel : indexed_channels_) {
    index.message_index_offsets.emplace_back(channel, start + scratch_.size());
    encode(indexes_[channel], scratch_);
    indexes_[channel].records.clear();
  }
  indexed_channels_.clear();
  index.message_index_length = scratch_.size();
  return write_record_bytes(scratch_);
}

Result<std::size_t> Writer::close() {
  auto released = flush();
  if (!released.ok()) {
    return released.error();
  }
  Statistics& stats = summary_.statistics;
  stats.channel_message_counts.clear();
  for (std::size_t id = 0; id < channel_counts_.size(); ++id) {
    if (channel_counts_[id] != 0) {
      stats.channel_message_counts.emplace_back(static_cast<std::uint16_t>(id), channel_counts_[id]);
    }
  }
  const std::uint32_t data_crc = options_.crcs ? data_crc_.value() : 0;
  std::vector<std::uint8_t> tail;
  if (options_.summary) {
    tail = encode_tail(summary_, sink_.offset(), data_crc);
  } else {
    encode(DataEnd{.data_section_crc = data_crc}, tail);
    encode(Footer{}, tail);
    tail.insert(tail.end(), kMagic.begin(), kMagic.end());
  }
  if (auto r = sink_.write(tail); !r.ok()) {
    return fail(r.error());
  }
  if (auto r = sink_.close(); !r.ok()) {
    return fail(r.error());
  }
  closed_ = true;
  return *released;
}

}  // namespace axon::mcap
