// Messages of an MCAP file in log-time order: chunks are loaded in order of their first message's time, and
// their messages merged through a heap, so chunks that overlap in time still give one ordered stream while
// only the chunks that overlap the current time are held in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <vector>

#include "src/tools/mcap/records.hpp"

namespace axon::mcap {

/// One chunk's records, decompressed and checked: its messages' (log time, offset in `records`).
struct LoadedChunk {
  std::vector<std::uint8_t> records;
  std::vector<std::pair<std::uint64_t, std::size_t>> messages;
};

class Reader;

/// Messages in log-time order (file order among equal times). A message's data stays valid until the next
/// call of next(). A corrupt chunk is an error of the call that reaches it; calling next() again goes on with
/// the chunks after it.
class MessageCursor {
 public:
  /// The next message into `out`: true, or false at the end; an error for a chunk that is corrupt.
  [[nodiscard]] Result<bool> next(Message& out);

 private:
  friend class Reader;
  explicit MessageCursor(Reader& reader);
  struct Entry {
    std::uint64_t log_time;
    std::size_t chunk;
    std::size_t message;
    bool operator>(const Entry& other) const {
      return log_time != other.log_time ? log_time > other.log_time
                                        : (chunk != other.chunk ? chunk > other.chunk : message > other.message);
    }
  };
  Reader* reader_;
  std::vector<std::size_t> order_;  // chunk numbers by start time
  std::size_t next_chunk_ = 0;
  std::vector<std::unique_ptr<LoadedChunk>> loaded_;
  std::vector<std::size_t> remaining_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
  std::size_t finished_chunk_ = SIZE_MAX;
};

}  // namespace axon::mcap
