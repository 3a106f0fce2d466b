// A thread that reads a file's chunks ahead of the cursor that consumes them, so that reading a chunk (a pread of
// megabytes, decompression, a CRC over it) costs that thread's time, not the consumer's: `axon play` publishes on
// a clock, and a 4 MiB chunk read on its timing thread made every message due meanwhile ~2 ms late.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "src/tools/mcap/message_cursor.hpp"
#include "src/tools/mcap/records.hpp"

namespace axon::mcap {

class Reader;

/// Reads the chunks `in_order` names, in that order, at most `depth` of them ahead of take(). Memory: the buffers
/// of the chunks in flight (the queue, the one being read, those the consumer holds), kept for reuse.
///
/// Thread safety: one consumer thread calls take(), give_back() and wait_filled(); the read-ahead thread calls
/// only Reader::read_chunk_into(), which changes nothing in the reader. The queue is guarded by a mutex held for a push
/// or a pop, never across a read.
class ChunkReadAhead {
 public:
  /// Starts the thread (std::system_error when the system refuses one).
  ChunkReadAhead(const Reader& reader, std::vector<ChunkIndex> in_order, std::size_t depth);
  ChunkReadAhead(const ChunkReadAhead&) = delete;
  ChunkReadAhead& operator=(const ChunkReadAhead&) = delete;
  /// Stops the thread after the read it is in, and joins it.
  ~ChunkReadAhead();

  /// The next chunk in order, or the error of reading it, waiting while it is being read. Called at most once per
  /// chunk named at construction.
  [[nodiscard]] Result<LoadedChunk> take();
  /// A chunk the consumer is done with: its buffers are read into again (no allocation, no page faults: a 4 MiB
  /// buffer allocated per chunk cost more than its read, and its page faults stalled the consumer's thread too).
  void give_back(LoadedChunk chunk);
  /// Waits until the queue holds `depth` chunks (or every chunk left): a replay calls it before its clock starts,
  /// so that the first messages do not wait for the first reads (nor for their buffers' first page faults).
  void wait_filled();

 private:
  struct Read {
    LoadedChunk chunk;
    Result<void> outcome;
  };
  void run();

  const Reader& reader_;
  const std::vector<ChunkIndex> in_order_;
  const std::size_t depth_;
  std::mutex mutex_;
  std::condition_variable changed_;  // a chunk was queued, taken, or stop_ set
  std::deque<Read> ready_;
  std::vector<LoadedChunk> spare_;  // given back, read into again
  std::size_t taken_ = 0;           // chunks take() handed out
  bool stop_ = false;
  std::thread thread_;  // last: started once everything it reads is constructed
};

}  // namespace axon::mcap
