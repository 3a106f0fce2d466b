// Log-time order across chunks (message_cursor.hpp).
#include "src/tools/mcap/message_cursor.hpp"

#include <algorithm>
#include <system_error>

#include "src/tools/mcap/chunk_read_ahead.hpp"
#include "src/tools/mcap/reader.hpp"

namespace axon::mcap {

MessageCursor::MessageCursor(Reader& reader, std::size_t read_ahead_chunks) : reader_(&reader) {
  const auto& chunks = reader.summary().chunk_indexes;
  order_.resize(chunks.size());
  for (std::size_t i = 0; i < order_.size(); ++i) {
    order_[i] = i;
  }
  std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
    return chunks[a].message_start_time < chunks[b].message_start_time;
  });
  loaded_.resize(chunks.size());
  remaining_.resize(chunks.size(), 0);
  if (read_ahead_chunks > 0 && !order_.empty()) {
    std::vector<ChunkIndex> in_order;
    in_order.reserve(order_.size());
    for (const std::size_t n : order_) {
      in_order.push_back(chunks[n]);
    }
    try {
      read_ahead_ = std::make_unique<ChunkReadAhead>(reader, std::move(in_order), read_ahead_chunks);
    } catch (const std::system_error&) {
      read_ahead_.reset();  // no thread to be had: next() reads each chunk itself, as without read-ahead
    }
  }
}

MessageCursor::MessageCursor(MessageCursor&&) noexcept = default;
MessageCursor& MessageCursor::operator=(MessageCursor&&) noexcept = default;
MessageCursor::~MessageCursor() = default;

void MessageCursor::wait_read_ahead() {
  if (read_ahead_) {
    read_ahead_->wait_filled();
  }
}

void MessageCursor::recycle(std::unique_ptr<LoadedChunk> chunk) {
  if (read_ahead_) {
    read_ahead_->give_back(std::move(*chunk));
  } else {
    spare_ = std::move(chunk);
  }
}

Result<std::unique_ptr<LoadedChunk>> MessageCursor::read_next_chunk(std::size_t chunk) {
  if (read_ahead_) {
    // The read-ahead thread reads the chunks in order_, the order in which next() asks for them.
    auto read = read_ahead_->take();
    if (!read.ok()) {
      return read.error();
    }
    auto loaded = std::make_unique<LoadedChunk>(std::move(*read));
    reader_->adopt(*loaded);
    return loaded;
  }
  std::unique_ptr<LoadedChunk> loaded = spare_ ? std::move(spare_) : std::make_unique<LoadedChunk>();
  if (auto read = reader_->read_chunk_into(reader_->summary().chunk_indexes[chunk], *loaded); !read.ok()) {
    spare_ = std::move(loaded);  // its buffers serve the next chunk
    return read.error();
  }
  reader_->adopt(*loaded);
  return loaded;
}

Result<bool> MessageCursor::next(Message& out) {
  if (finished_chunk_ != SIZE_MAX) {  // the previous message's chunk is done: its data may go now
    recycle(std::move(loaded_[finished_chunk_]));
    finished_chunk_ = SIZE_MAX;
  }
  const auto& chunks = reader_->summary().chunk_indexes;
  while (next_chunk_ < order_.size() &&
         (heap_.empty() || chunks[order_[next_chunk_]].message_start_time <= heap_.top().log_time)) {
    const std::size_t n = order_[next_chunk_++];
    auto chunk = read_next_chunk(n);
    if (!chunk.ok()) {
      return chunk.error();
    }
    loaded_[n] = std::move(*chunk);
    remaining_[n] = loaded_[n]->messages.size();
    for (std::size_t m = 0; m < loaded_[n]->messages.size(); ++m) {
      heap_.push({loaded_[n]->messages[m].first, n, m});
    }
    if (remaining_[n] == 0) {
      recycle(std::move(loaded_[n]));  // no message
    }
  }
  if (heap_.empty()) {
    return false;
  }
  const Entry top = heap_.top();
  heap_.pop();
  const LoadedChunk& chunk = *loaded_[top.chunk];
  // The record was decoded when the chunk was loaded: it is known to be whole and valid.
  auto record = next_record(chunk.records, chunk.messages[top.message].second);
  auto message = decode_message(record->content);
  out = *message;
  if (--remaining_[top.chunk] == 0) {
    finished_chunk_ = top.chunk;
  }
  return true;
}

}  // namespace axon::mcap
