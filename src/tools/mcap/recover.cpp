// Recovery of a cut MCAP file (recover.hpp).
#include "src/tools/mcap/recover.hpp"

#include <algorithm>
#include <map>

#include "src/tools/mcap/crc32.hpp"
#include "src/tools/mcap/file_sink.hpp"

namespace axon::mcap {

Result<RecoverReport> recover(const std::string& input, const std::string& output) {
  if (input == output) {
    return Error(ErrorCode::kInvalidArgument, "recover: write the recovered file to another path than " + input);
  }
  auto reader = Reader::open(input, ReaderOptions{.use_summary = false});
  if (!reader.ok()) {
    return reader.error();
  }
  Reader& in = **reader;
  RecoverReport report;
  report.note = in.scan_note();

  // Keep the chunks that decompress and match their CRC, up to the first that does not.
  Summary summary;
  summary.schemas = in.summary().schemas;
  std::vector<ChunkIndex> kept;
  std::map<std::uint16_t, std::uint64_t> counts;
  Statistics& stats = summary.statistics;
  LoadedChunk last;
  for (const ChunkIndex& index : in.summary().chunk_indexes) {
    auto chunk = in.load_chunk(index);
    if (!chunk.ok()) {
      report.note += "; dropped the chunk at offset " + std::to_string(index.chunk_start_offset) +
                     " and after: " + std::string(chunk.error().message());
      break;
    }
    for (const auto& [log_time, offset] : chunk->messages) {
      auto record = next_record(chunk->records, offset);
      auto message = decode_message(record->content);  // checked by load_chunk
      ++counts[message->header.channel_id];
      stats.message_start_time = stats.message_count == 0 ? log_time : std::min(stats.message_start_time, log_time);
      stats.message_end_time = std::max(stats.message_end_time, log_time);
      ++stats.message_count;
    }
    kept.push_back(index);
    last = std::move(*chunk);
  }
  summary.schemas = in.summary().schemas;  // load_chunk may have found more inside chunks
  summary.channels = in.summary().channels;

  // The data section kept: up to the end of the last good chunk (or the header when there is none).
  std::uint64_t keep = kMagic.size();
  if (!kept.empty()) {
    keep = kept.back().chunk_start_offset + kept.back().chunk_length;
    kept.back().message_index_offsets.clear();
    kept.back().message_index_length = 0;
  } else {
    auto start = in.read(kMagic.size() + 1, 8);  // the header record's length
    if (!start.ok()) {
      return start.error();
    }
    std::uint64_t length = 0;
    for (std::size_t i = 0; i < 8; ++i) {
      length |= static_cast<std::uint64_t>((*start)[i]) << (8 * i);
    }
    keep = kMagic.size() + kRecordPrefixBytes + length;
  }
  for (const MetadataIndex& index : in.summary().metadata_indexes) {
    if (index.offset + index.length <= keep) {
      summary.metadata_indexes.push_back(index);
    }
  }

  auto sink = FileSink::create(output);
  if (!sink.ok()) {
    return sink.error();
  }
  Crc32 data_crc;
  constexpr std::uint64_t kBlock = 1 << 20;
  for (std::uint64_t at = 0; at < keep; at += kBlock) {
    auto block = in.read(at, std::min(kBlock, keep - at));
    if (!block.ok()) {
      return block.error();
    }
    data_crc.update(*block);
    if (auto r = sink->write(*block); !r.ok()) {
      return r.error();
    }
  }

  // The last chunk's message indexes, written again (the cut may have fallen inside them).
  if (!kept.empty()) {
    std::map<std::uint16_t, MessageIndex> indexes;
    for (const auto& [log_time, offset] : last.messages) {
      auto record = next_record(last.records, offset);
      auto message = decode_message(record->content);
      auto& index = indexes[message->header.channel_id];
      index.channel_id = message->header.channel_id;
      index.records.emplace_back(log_time, offset);
    }
    std::vector<std::uint8_t> bytes;
    for (const auto& [channel, index] : indexes) {
      kept.back().message_index_offsets.emplace_back(channel, sink->offset() + bytes.size());
      encode(index, bytes);
    }
    kept.back().message_index_length = bytes.size();
    data_crc.update(bytes);
    if (auto r = sink->write(bytes); !r.ok()) {
      return r.error();
    }
  }

  summary.chunk_indexes = kept;
  stats.schema_count = static_cast<std::uint16_t>(summary.schemas.size());
  stats.channel_count = static_cast<std::uint32_t>(summary.channels.size());
  stats.chunk_count = static_cast<std::uint32_t>(kept.size());
  stats.metadata_count = static_cast<std::uint32_t>(summary.metadata_indexes.size());
  stats.channel_message_counts.assign(counts.begin(), counts.end());
  const std::vector<std::uint8_t> tail = encode_tail(summary, sink->offset(), data_crc.value());
  if (auto r = sink->write(tail); !r.ok()) {
    return r.error();
  }
  if (auto r = sink->close(); !r.ok()) {
    return r.error();
  }
  report.chunks = kept.size();
  report.messages = stats.message_count;
  report.bytes_kept = keep;
  report.bytes_dropped = in.file_bytes() - keep;
  return report;
}

}  // namespace axon::mcap
