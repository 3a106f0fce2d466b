// Chunks read by a thread of their own, a bounded queue ahead of the consumer (chunk_read_ahead.hpp).
#include "src/tools/mcap/chunk_read_ahead.hpp"

#include <utility>

#include "src/tools/mcap/reader.hpp"

namespace axon::mcap {

ChunkReadAhead::ChunkReadAhead(const Reader& reader, std::vector<ChunkIndex> in_order, std::size_t depth)
    : reader_(reader), in_order_(std::move(in_order)), depth_(depth == 0 ? 1 : depth), thread_([this] { run(); }) {}

ChunkReadAhead::~ChunkReadAhead() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void ChunkReadAhead::run() {
  for (const ChunkIndex& index : in_order_) {
    Read read;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || ready_.size() < depth_; });
      if (stop_) {
        return;
      }
      if (!spare_.empty()) {
        read.chunk = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    read.outcome = reader_.read_chunk_into(index, read.chunk);  // outside the lock: the consumer takes meanwhile
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(std::move(read));
    }
    changed_.notify_all();
  }
}

Result<LoadedChunk> ChunkReadAhead::take() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !ready_.empty(); });
  Read read = std::move(ready_.front());
  ready_.pop_front();
  lock.unlock();
  changed_.notify_all();  // room for the next read
  if (!read.outcome.ok()) {
    return read.outcome.error();
  }
  return std::move(read.chunk);
}

void ChunkReadAhead::give_back(LoadedChunk chunk) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (spare_.size() <= depth_) {
    spare_.push_back(std::move(chunk));
  }  // else freed here: more given back than can be in flight
}

}  // namespace axon::mcap
