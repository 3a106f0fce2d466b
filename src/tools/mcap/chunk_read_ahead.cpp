// Chunks read by a thread of their own, a bounded queue ahead of the consumer (chunk_read_ahead.hpp).
#include "src/tools/mcap/chunk_read_ahead.hpp"

#include <algorithm>
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
  // Buffers for every chunk that can be in flight at the start (the queue, the one read, the consumer's), sized
  // for the largest chunk and written once (resize zero-fills) here, not on the consumer's first reads. The sizes
  // come from the file: only those a chunk can have are believed (within the file; decompressed, within the
  // reader's limit), and no buffer is made larger than kMostPresized ahead (a larger chunk grows one when read).
  constexpr std::uint64_t kMostPresized = std::uint64_t{64} << 20;
  std::uint64_t largest_record = 0;
  std::uint64_t largest_records = 0;
  for (const ChunkIndex& index : in_order_) {
    if (index.chunk_length <= reader_.file_bytes()) {
      largest_record = std::max(largest_record, std::min(index.chunk_length, kMostPresized));
    }
    if (!index.compression.empty() && index.uncompressed_size <= reader_.options().max_chunk_bytes) {
      largest_records = std::max(largest_records, std::min(index.uncompressed_size, kMostPresized));
    }
  }
  const std::size_t buffers = std::min(in_order_.size(), depth_ + 2);
  for (std::size_t i = 0; i < buffers; ++i) {
    LoadedChunk spare;
    spare.file_bytes.resize(static_cast<std::size_t>(largest_record));
    spare.decompressed.resize(static_cast<std::size_t>(largest_records));
    const std::lock_guard<std::mutex> lock(mutex_);
    spare_.push_back(std::move(spare));
  }
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
  ++taken_;
  lock.unlock();
  changed_.notify_all();  // room for the next read
  if (!read.outcome.ok()) {
    return read.outcome.error();
  }
  return std::move(read.chunk);
}

void ChunkReadAhead::wait_filled() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return ready_.size() >= std::min(depth_, in_order_.size() - taken_); });
}

void ChunkReadAhead::give_back(LoadedChunk chunk) {
  // Kept, never freed here: freeing a few MiB (munmap, and the TLB shootdown that follows) took the consumer's
  // thread 0.6 ms on a VM. The spares are bounded by the chunks ever in flight at once: the queue, the one being
  // read, and those the cursor holds (the chunks that overlap in time).
  const std::lock_guard<std::mutex> lock(mutex_);
  spare_.push_back(std::move(chunk));
}

}  // namespace axon::mcap
