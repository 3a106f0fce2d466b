// MCAP reader: footer and summary, or a scan of the data section (reader.hpp).
#include "src/tools/mcap/reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "src/tools/mcap/compression.hpp"
#include "src/tools/mcap/crc32.hpp"
#include "src/tools/mcap/errno_text.hpp"

namespace axon::mcap {

Result<std::unique_ptr<Reader>> Reader::open(const std::string& path, ReaderOptions options) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Error(ErrorCode::kNotFound, "cannot open " + path + ": " + errno_text(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return Error(ErrorCode::kSystem, "cannot stat " + path + ": " + errno_text(e));
  }
  std::unique_ptr<Reader> reader(new Reader(fd, path, static_cast<std::uint64_t>(st.st_size), options));
  if (auto r = reader->read_header(); !r.ok()) {
    return r.error();
  }
  if (options.use_summary) {
    if (auto r = reader->read_summary(); !r.ok()) {
      reader->scan_note_ = std::string(r.error().message());
      reader->summary_ = Summary{};
    }
  } else {
    reader->scan_note_ = "asked to scan the data section";
  }
  if (!reader->summary_used_) {
    if (auto r = reader->scan(); !r.ok()) {
      return r.error();
    }
  }
  return reader;
}

Reader::Reader(int fd, std::string path, std::uint64_t size, ReaderOptions options)
    : fd_(fd), path_(std::move(path)), size_(size), options_(options) {}

Reader::~Reader() { ::close(fd_); }

Result<void> Reader::check_within(std::uint64_t offset, std::uint64_t length) const {
  if (offset > size_ || length > size_ - offset) {
    return Error(ErrorCode::kMalformed, path_ + ": " + std::to_string(length) + " bytes at offset " +
                                            std::to_string(offset) + " lie past the end of the file (" +
                                            std::to_string(size_) + " bytes)");
  }
  return {};
}

Result<std::vector<std::uint8_t>> Reader::read(std::uint64_t offset, std::uint64_t length) const {
  if (auto within = check_within(offset, length); !within.ok()) {
    return within.error();  // before the buffer is made: a corrupt length must not allocate
  }
  std::vector<std::uint8_t> out(static_cast<std::size_t>(length));
  if (auto r = read_into(offset, out); !r.ok()) {
    return r.error();
  }
  return out;
}

Result<void> Reader::read_into(std::uint64_t offset, std::span<std::uint8_t> out) const {
  if (auto within = check_within(offset, out.size()); !within.ok()) {
    return within;
  }
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return Error(ErrorCode::kSystem, "reading " + path_ + ": " + (n < 0 ? errno_text(errno) : "file shrank"));
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

Result<void> Reader::read_header() {
  auto magic = read(0, kMagic.size());
  if (!magic.ok() || !std::equal(kMagic.begin(), kMagic.end(), magic->begin())) {
    return Error(ErrorCode::kMalformed, path_ + " is not an MCAP file (it does not start with the MCAP magic)");
  }
  auto prefix = read(kMagic.size(), kRecordPrefixBytes);
  if (!prefix.ok()) {
    return Error(ErrorCode::kMalformed, path_ + ": the file ends before its MCAP header record");
  }
  std::uint64_t length = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    length |= static_cast<std::uint64_t>((*prefix)[1 + i]) << (8 * i);
  }
  if ((*prefix)[0] != static_cast<std::uint8_t>(Opcode::kHeader)) {
    return Error(ErrorCode::kMalformed, path_ + ": the first MCAP record is not a header");
  }
  auto content = read(kMagic.size() + kRecordPrefixBytes, length);
  if (!content.ok()) {
    return content.error();
  }
  auto header = decode_header(*content);
  if (!header.ok()) {
    return header.error();
  }
  header_ = std::move(*header);
  data_start_ = kMagic.size() + kRecordPrefixBytes + length;
  return {};
}

Result<void> Reader::read_summary() {
  const std::uint64_t tail = kFooterRecordBytes + kMagic.size();
  if (size_ < data_start_ + tail) {
    return Error(ErrorCode::kMalformed, "the file ends before a footer (the writer did not finish it)");
  }
  auto bytes = read(size_ - tail, tail);
  if (!bytes.ok()) {
    return bytes.error();
  }
  if (!std::equal(kMagic.begin(), kMagic.end(), bytes->end() - kMagic.size()) ||
      (*bytes)[0] != static_cast<std::uint8_t>(Opcode::kFooter)) {
    return Error(ErrorCode::kMalformed, "no footer and closing magic at the end (the writer did not finish it)");
  }
  auto record = next_record(Bytes(*bytes).first(kFooterRecordBytes), 0);
  if (!record.ok()) {
    return record.error();
  }
  auto footer = decode_footer(record->content);
  if (!footer.ok()) {
    return footer.error();
  }
  const std::uint64_t footer_at = size_ - tail;
  if (footer->summary_start == 0) {
    return Error(ErrorCode::kNotFound, "the file has no summary section");
  }
  if (footer->summary_start < data_start_ || footer->summary_start > footer_at) {
    return Error(ErrorCode::kMalformed, "the footer's summary start lies outside the file (corrupt footer)");
  }
  auto summary_bytes = read(footer->summary_start, footer_at - footer->summary_start);
  if (!summary_bytes.ok()) {
    return summary_bytes.error();
  }
  if (footer->summary_crc != 0 && options_.verify_crcs) {
    Crc32 crc;
    crc.update(*summary_bytes);
    crc.update(Bytes(*bytes).first(kRecordPrefixBytes + 16));
    if (crc.value() != footer->summary_crc) {
      return Error(ErrorCode::kMalformed, "the summary's CRC does not match the footer's (corrupt summary)");
    }
  }
  // The summary offsets (if any) follow the summary groups: only the groups are decoded as summary records.
  std::uint64_t groups_end = footer_at;
  if (footer->summary_offset_start != 0) {
    if (footer->summary_offset_start < footer->summary_start || footer->summary_offset_start > footer_at) {
      return Error(ErrorCode::kMalformed, "the footer's summary offset start lies outside the summary");
    }
    groups_end = footer->summary_offset_start;
  }
  // The data section ends before the summary: DataEnd (13 bytes) at most there.
  auto summary = decode_summary(Bytes(*summary_bytes).first(groups_end - footer->summary_start), footer->summary_start);
  if (!summary.ok()) {
    return summary.error();
  }
  summary_ = std::move(*summary);
  summary_used_ = true;
  return {};
}

void Reader::add_schema(Schema schema) {
  for (const Schema& known : summary_.schemas) {
    if (known.id == schema.id) {
      return;
    }
  }
  summary_.schemas.push_back(std::move(schema));
}

void Reader::add_channel(Channel channel) {
  for (const Channel& known : summary_.channels) {
    if (known.id == channel.id) {
      return;
    }
  }
  summary_.channels.push_back(std::move(channel));
}

Result<void> Reader::scan() {
  std::uint64_t at = data_start_;
  scan_end_ = at;
  const auto stop = [&](const std::string& why) {
    scan_note_ += (scan_note_.empty() ? "" : "; ") + why + ": read up to offset " + std::to_string(at);
  };
  bool after_chunk = false;  // MessageIndex records right after a chunk belong to it
  for (;;) {
    if (size_ - at < kRecordPrefixBytes) {
      stop(at == size_ ? "the file ends without DataEnd" : "the file ends inside a record prefix");
      break;
    }
    auto prefix = read(at, kRecordPrefixBytes);
    if (!prefix.ok()) {
      return prefix.error();
    }
    std::uint64_t length = 0;
    for (std::size_t i = 0; i < 8; ++i) {
      length |= static_cast<std::uint64_t>((*prefix)[1 + i]) << (8 * i);
    }
    const auto opcode = static_cast<Opcode>((*prefix)[0]);
    if ((*prefix)[0] == 0 || length > size_ - at - kRecordPrefixBytes) {
      stop("a record is cut short or corrupt at offset " + std::to_string(at));
      break;
    }
    if (opcode == Opcode::kDataEnd || opcode == Opcode::kFooter) {
      data_end_seen_ = opcode == Opcode::kDataEnd;
      break;
    }
    const std::uint64_t record_bytes = kRecordPrefixBytes + length;
    bool accepted = true;
    switch (opcode) {
      case Opcode::kSchema:
      case Opcode::kChannel:
      case Opcode::kChunk:
      case Opcode::kMessageIndex:
      case Opcode::kMetadata: {
        auto content = read(at + kRecordPrefixBytes, length);
        if (!content.ok()) {
          return content.error();
        }
        if (opcode == Opcode::kSchema) {
          auto schema = decode_schema(*content);
          accepted = schema.ok();
          if (accepted) {
            add_schema(std::move(*schema));
          }
        } else if (opcode == Opcode::kChannel) {
          auto channel = decode_channel(*content);
          accepted = channel.ok();
          if (accepted) {
            add_channel(std::move(*channel));
          }
        } else if (opcode == Opcode::kChunk) {
          auto chunk = decode_chunk(*content);
          accepted = chunk.ok();
          if (accepted) {
            summary_.chunk_indexes.push_back(ChunkIndex{.message_start_time = chunk->message_start_time,
                                                        .message_end_time = chunk->message_end_time,
                                                        .chunk_start_offset = at,
                                                        .chunk_length = record_bytes,
                                                        .message_index_offsets = {},
                                                        .message_index_length = 0,
                                                        .compression = chunk->compression,
                                                        .compressed_size = chunk->records.size(),
                                                        .uncompressed_size = chunk->uncompressed_size});
          }
        } else if (opcode == Opcode::kMessageIndex) {
          auto index = decode_message_index(*content);
          accepted = index.ok();
          if (accepted && after_chunk) {
            summary_.chunk_indexes.back().message_index_offsets.emplace_back(index->channel_id, at);
            summary_.chunk_indexes.back().message_index_length += record_bytes;
          }
        } else {
          auto metadata = decode_metadata(*content);
          accepted = metadata.ok();
          if (accepted) {
            summary_.metadata_indexes.push_back({.offset = at, .length = record_bytes, .name = metadata->name});
          }
        }
        break;
      }
      default:  // messages outside chunks, attachments, unknown records: skipped
        break;
    }
    if (!accepted) {
      stop("a corrupt record at offset " + std::to_string(at));
      break;
    }
    after_chunk = opcode == Opcode::kChunk || (after_chunk && opcode == Opcode::kMessageIndex);
    at += record_bytes;
    scan_end_ = at;
  }
  Statistics& stats = summary_.statistics;
  stats.schema_count = static_cast<std::uint16_t>(summary_.schemas.size());
  stats.channel_count = static_cast<std::uint32_t>(summary_.channels.size());
  stats.chunk_count = static_cast<std::uint32_t>(summary_.chunk_indexes.size());
  stats.metadata_count = static_cast<std::uint32_t>(summary_.metadata_indexes.size());
  return {};
}

Result<LoadedChunk> Reader::load_chunk(const ChunkIndex& index) {
  LoadedChunk loaded;
  if (auto r = read_chunk_into(index, loaded); !r.ok()) {
    return r.error();
  }
  adopt(loaded);
  return loaded;
}

void Reader::adopt(const LoadedChunk& chunk) {
  for (const Schema& schema : chunk.schemas) {
    add_schema(schema);
  }
  for (const Channel& channel : chunk.channels) {
    add_channel(channel);
  }
}

namespace {

/// The first `size` bytes of `buffer`, grown (never shrunk) to hold them.
std::span<std::uint8_t> sized(std::vector<std::uint8_t>& buffer, std::size_t size) {
  if (buffer.size() < size) {
    buffer.resize(size);
  }
  return {buffer.data(), size};
}

}  // namespace

Result<void> Reader::read_chunk_into(const ChunkIndex& index, LoadedChunk& into) const {
  into.records = {};
  into.messages.clear();
  into.schemas.clear();
  into.channels.clear();
  if (auto within = check_within(index.chunk_start_offset, index.chunk_length); !within.ok()) {
    return within;  // before the buffer grows: a corrupt index must not allocate
  }
  const std::span<std::uint8_t> bytes = sized(into.file_bytes, static_cast<std::size_t>(index.chunk_length));
  if (auto r = read_into(index.chunk_start_offset, bytes); !r.ok()) {
    return r.error();
  }
  auto record = next_record(bytes, 0);
  if (!record.ok()) {
    return record.error();
  }
  if (record->opcode != Opcode::kChunk) {
    return Error(ErrorCode::kMalformed, path_ + ": no chunk at offset " + std::to_string(index.chunk_start_offset) +
                                            " where the chunk index says (corrupt index)");
  }
  auto chunk = decode_chunk(record->content);
  if (!chunk.ok()) {
    return chunk.error();
  }
  auto compression = parse_compression(chunk->compression);
  if (!compression.ok()) {
    return compression.error();
  }
  if (chunk->uncompressed_size > options_.max_chunk_bytes) {
    return Error(ErrorCode::kMalformed, path_ + ": the chunk at offset " + std::to_string(index.chunk_start_offset) +
                                            " declares " + std::to_string(chunk->uncompressed_size) +
                                            " uncompressed bytes, more than the reader's limit of " +
                                            std::to_string(options_.max_chunk_bytes));
  }
  LoadedChunk& loaded = into;
  if (*compression == Compression::kNone && chunk->records.size() == chunk->uncompressed_size) {
    loaded.records = chunk->records;  // read in place: no copy
  } else {
    const std::span<std::uint8_t> out = sized(loaded.decompressed, static_cast<std::size_t>(chunk->uncompressed_size));
    if (auto r = decompress(*compression, chunk->records, out); !r.ok()) {
      return Error(ErrorCode::kMalformed, path_ + ": chunk at offset " + std::to_string(index.chunk_start_offset) +
                                              ": " + std::string(r.error().message()));
    }
    loaded.records = out;
  }
  if (options_.verify_crcs && chunk->uncompressed_crc != 0 && crc32(loaded.records) != chunk->uncompressed_crc) {
    return Error(ErrorCode::kMalformed, path_ + ": the chunk at offset " + std::to_string(index.chunk_start_offset) +
                                            " does not match its CRC (corrupt)");
  }
  std::size_t at = 0;
  while (at < loaded.records.size()) {
    auto inner = next_record(loaded.records, at);
    if (!inner.ok()) {
      return inner.error();
    }
    if (inner->opcode == Opcode::kMessage) {
      auto message = decode_message(inner->content);
      if (!message.ok()) {
        return message.error();
      }
      loaded.messages.emplace_back(message->header.log_time, at);
    } else if (inner->opcode == Opcode::kSchema) {
      auto schema = decode_schema(inner->content);
      if (!schema.ok()) {
        return schema.error();
      }
      loaded.schemas.push_back(std::move(*schema));
    } else if (inner->opcode == Opcode::kChannel) {
      auto channel = decode_channel(inner->content);
      if (!channel.ok()) {
        return channel.error();
      }
      loaded.channels.push_back(std::move(*channel));
    }
    at += inner->total_bytes;
  }
  return {};
}

}  // namespace axon::mcap
