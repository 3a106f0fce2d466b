// Rebuilds a complete MCAP file from one whose writer stopped (killed, full disk): the data section up to
// the end of its last complete, verified chunk is copied as it is, that chunk's message indexes are
// written again, and DataEnd, a summary (schemas, channels, statistics, chunk and metadata indexes) and a
// footer are added.
#pragma once

#include <cstdint>
#include <string>

#include "src/tools/mcap/reader.hpp"

namespace axon::mcap {

struct RecoverReport {
  std::uint64_t chunks = 0;         ///< Complete chunks kept.
  std::uint64_t messages = 0;       ///< Messages in them.
  std::uint64_t bytes_kept = 0;     ///< Of the input's data section.
  std::uint64_t bytes_dropped = 0;  ///< Of the input after them (cut or corrupt).
  std::string note;                 ///< Why the input had to be scanned, where it stopped.
};

/// Writes the recovered file to `output` (which must not be `input`).
[[nodiscard]] Result<RecoverReport> recover(const std::string& input, const std::string& output);

}  // namespace axon::mcap
