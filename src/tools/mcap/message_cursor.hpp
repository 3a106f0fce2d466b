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

/// One chunk's records, decompressed and checked: its messages' (log time, offset in `records`), and the schemas
/// and channels it holds. Move-only: `records` views one of its own buffers.
struct LoadedChunk {
  LoadedChunk() = default;
  LoadedChunk(const LoadedChunk&) = delete;
  LoadedChunk& operator=(const LoadedChunk&) = delete;
  LoadedChunk(LoadedChunk&&) noexcept = default;  // a vector's move keeps its buffer: `records` stays valid
  LoadedChunk& operator=(LoadedChunk&&) noexcept = default;
  ~LoadedChunk() = default;

  Bytes records;  ///< In `file_bytes` (an uncompressed chunk) or in `decompressed`.
  std::vector<std::pair<std::uint64_t, std::size_t>> messages;
  std::vector<Schema> schemas;
  std::vector<Channel> channels;
  /// The chunk record as read, and its records decompressed. Only ever grown: a LoadedChunk read into again
  /// (Reader::read_chunk_into) reuses them without allocating, zero-filling or faulting in pages.
  std::vector<std::uint8_t> file_bytes;
  std::vector<std::uint8_t> decompressed;
};

class Reader;
class ChunkReadAhead;

/// Messages in log-time order (file order among equal times). A message's data stays valid until the next
/// call of next(). A corrupt chunk is an error of the call that reaches it; calling next() again goes on with
/// the chunks after it. With read-ahead, a thread of the cursor's own reads the next chunks (chunk_read_ahead.hpp)
/// and next() waits only when it is behind.
class MessageCursor {
 public:
  MessageCursor(MessageCursor&&) noexcept;
  MessageCursor& operator=(MessageCursor&&) noexcept;
  ~MessageCursor();
  /// The next message into `out`: true, or false at the end; an error for a chunk that is corrupt.
  [[nodiscard]] Result<bool> next(Message& out);
  /// With read-ahead: waits until its first chunks are read (ChunkReadAhead::wait_filled). Else nothing.
  void wait_read_ahead();

 private:
  friend class Reader;
  /// `read_ahead_chunks` 0: chunks are read by next() itself (also when the system refuses a thread).
  MessageCursor(Reader& reader, std::size_t read_ahead_chunks);
  /// A chunk done with: its buffers go back to the read-ahead thread, or serve the next read here.
  void recycle(std::unique_ptr<LoadedChunk> chunk);
  /// Chunk `chunk` (the next in order_), read into spare_'s buffers when there is one.
  [[nodiscard]] Result<std::unique_ptr<LoadedChunk>> read_next_chunk(std::size_t chunk);
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
  std::unique_ptr<LoadedChunk> spare_;          // a chunk done with, whose buffers the next read reuses
  std::unique_ptr<ChunkReadAhead> read_ahead_;  // null: no read-ahead
};

}  // namespace axon::mcap
