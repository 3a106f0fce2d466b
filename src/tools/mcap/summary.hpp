// The summary section: what a reader needs to seek (schemas, channels, chunk indexes, metadata indexes,
// statistics), followed by the summary offsets, the footer and the closing magic.
#pragma once

#include <cstdint>
#include <vector>

#include "src/tools/mcap/records.hpp"

namespace axon::mcap {

struct Summary {
  std::vector<Schema> schemas;
  std::vector<Channel> channels;
  std::vector<ChunkIndex> chunk_indexes;
  std::vector<MetadataIndex> metadata_indexes;
  Statistics statistics;
};

/// DataEnd, then the summary section (one group per record kind), the summary offsets, the footer (its CRC
/// covers the summary through the footer's own offsets) and the magic: the tail of a file whose data section
/// ends at `data_end_offset` with CRC `data_section_crc`.
[[nodiscard]] std::vector<std::uint8_t> encode_tail(const Summary& summary, std::uint64_t data_end_offset,
                                                    std::uint32_t data_section_crc);

/// Reads a summary section (`bytes`, found at file offset `summary_start`); chunk and metadata indexes that
/// point past `data_limit` (where the data section can end at most) are refused.
[[nodiscard]] Result<Summary> decode_summary(Bytes bytes, std::uint64_t data_limit);

}  // namespace axon::mcap
