// Log-time order across chunks (message_cursor.hpp).
#include "src/tools/mcap/message_cursor.hpp"

#include <algorithm>

#include "src/tools/mcap/reader.hpp"

namespace axon::mcap {

MessageCursor::MessageCursor(Reader& reader) : reader_(&reader) {
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
}

Result<bool> MessageCursor::next(Message& out) {
  if (finished_chunk_ != SIZE_MAX) {  // the previous message's chunk is done: its data may go now
    loaded_[finished_chunk_].reset();
    finished_chunk_ = SIZE_MAX;
  }
  const auto& chunks = reader_->summary().chunk_indexes;
  while (next_chunk_ < order_.size() &&
         (heap_.empty() || chunks[order_[next_chunk_]].message_start_time <= heap_.top().log_time)) {
    const std::size_t n = order_[next_chunk_++];
    auto chunk = reader_->load_chunk(chunks[n]);
    if (!chunk.ok()) {
      return chunk.error();
    }
    loaded_[n] = std::make_unique<LoadedChunk>(std::move(*chunk));
    remaining_[n] = loaded_[n]->messages.size();
    for (std::size_t m = 0; m < loaded_[n]->messages.size(); ++m) {
      heap_.push({loaded_[n]->messages[m].first, n, m});
    }
    if (remaining_[n] == 0) {
      loaded_[n].reset();
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
