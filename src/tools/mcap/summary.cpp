// Summary section encoding and decoding (summary.hpp).
#include "src/tools/mcap/summary.hpp"

#include <string>

#include "src/tools/mcap/crc32.hpp"

namespace axon::mcap {
namespace {

// Encodes each record of one group and records where the group lies, for its SummaryOffset.
template <class Record>
void put_group(const std::vector<Record>& records, Opcode opcode, std::uint64_t base, std::vector<std::uint8_t>& out,
               std::vector<SummaryOffset>& offsets) {
  if (records.empty()) {
    return;
  }
  const std::size_t start = out.size();
  for (const Record& record : records) {
    encode(record, out);
  }
  offsets.push_back({.group_opcode = opcode, .group_start = base + start, .group_length = out.size() - start});
}

}  // namespace

std::vector<std::uint8_t> encode_tail(const Summary& summary, std::uint64_t data_end_offset,
                                      std::uint32_t data_section_crc) {
  std::vector<std::uint8_t> out;
  encode(DataEnd{.data_section_crc = data_section_crc}, out);
  const std::size_t summary_at = out.size();
  const std::uint64_t base = data_end_offset;  // file offset of out[0]
  std::vector<SummaryOffset> offsets;
  put_group(summary.schemas, Opcode::kSchema, base, out, offsets);
  put_group(summary.channels, Opcode::kChannel, base, out, offsets);
  put_group(std::vector<Statistics>{summary.statistics}, Opcode::kStatistics, base, out, offsets);
  put_group(summary.chunk_indexes, Opcode::kChunkIndex, base, out, offsets);
  put_group(summary.metadata_indexes, Opcode::kMetadataIndex, base, out, offsets);
  const std::size_t offsets_at = out.size();
  for (const SummaryOffset& offset : offsets) {
    encode(offset, out);
  }
  encode(Footer{.summary_start = base + summary_at, .summary_offset_start = base + offsets_at}, out);
  // The CRC covers the summary and the footer up to (not including) the CRC field itself.
  const std::size_t crc_at = out.size() - 4;
  const std::uint32_t crc = crc32(std::span(out).subspan(summary_at, crc_at - summary_at));
  for (std::size_t i = 0; i < 4; ++i) {
    out[crc_at + i] = static_cast<std::uint8_t>(crc >> (8 * i));
  }
  out.insert(out.end(), kMagic.begin(), kMagic.end());
  return out;
}

Result<Summary> decode_summary(Bytes bytes, std::uint64_t data_limit) {
  Summary summary;
  bool have_statistics = false;
  std::size_t at = 0;
  while (at < bytes.size()) {
    auto record = next_record(bytes, at);
    if (!record.ok()) {
      return record.error();
    }
    at += record->total_bytes;
    switch (record->opcode) {
      case Opcode::kSchema: {
        auto schema = decode_schema(record->content);
        if (!schema.ok()) {
          return schema.error();
        }
        summary.schemas.push_back(std::move(*schema));
        break;
      }
      case Opcode::kChannel: {
        auto channel = decode_channel(record->content);
        if (!channel.ok()) {
          return channel.error();
        }
        summary.channels.push_back(std::move(*channel));
        break;
      }
      case Opcode::kChunkIndex: {
        auto index = decode_chunk_index(record->content);
        if (!index.ok()) {
          return index.error();
        }
        if (index->chunk_start_offset < kMagic.size() || index->chunk_length > data_limit ||
            index->chunk_start_offset > data_limit - index->chunk_length) {
          return Error(ErrorCode::kMalformed, "MCAP ChunkIndex: a chunk at offset " +
                                                  std::to_string(index->chunk_start_offset) + " of " +
                                                  std::to_string(index->chunk_length) +
                                                  " bytes lies outside the data section (corrupt summary)");
        }
        summary.chunk_indexes.push_back(std::move(*index));
        break;
      }
      case Opcode::kMetadataIndex: {
        auto index = decode_metadata_index(record->content);
        if (!index.ok()) {
          return index.error();
        }
        if (index->length > data_limit || index->offset > data_limit - index->length) {
          return Error(ErrorCode::kMalformed,
                       "MCAP MetadataIndex '" + index->name + "' points outside the data section (corrupt summary)");
        }
        summary.metadata_indexes.push_back(std::move(*index));
        break;
      }
      case Opcode::kStatistics: {
        auto statistics = decode_statistics(record->content);
        if (!statistics.ok()) {
          return statistics.error();
        }
        summary.statistics = std::move(*statistics);
        have_statistics = true;
        break;
      }
      default:  // attachment indexes, and records a later spec adds: not needed to read messages
        break;
    }
  }
  if (!have_statistics) {
    summary.statistics.chunk_count = static_cast<std::uint32_t>(summary.chunk_indexes.size());
  }
  return summary;
}

}  // namespace axon::mcap
