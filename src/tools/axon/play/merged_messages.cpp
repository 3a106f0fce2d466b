#include "src/tools/axon/play/merged_messages.hpp"

namespace axon::tools {

MergedMessages::MergedMessages(const std::vector<std::unique_ptr<mcap::Reader>>& readers,
                               std::size_t read_ahead_chunks) {
  cursors_.reserve(readers.size());
  current_.resize(readers.size());
  for (std::size_t i = 0; i < readers.size(); ++i) {
    cursors_.push_back(readers[i]->messages(read_ahead_chunks));
    pending_.push_back(i);
  }
}

void MergedMessages::wait_read_ahead() {
  for (mcap::MessageCursor& cursor : cursors_) {
    cursor.wait_read_ahead();
  }
}

Result<void> MergedMessages::advance(std::size_t file) {
  auto more = cursors_[file].next(current_[file]);
  if (!more) {
    return more.error();
  }
  if (*more) {
    heap_.push(Head{.log_time = current_[file].header.log_time, .file = file});
  }
  return {};
}

Result<bool> MergedMessages::next(FileMessage& out) {
  // A file is pending until its cursor moved on: at the start, and after its message was handed out (done with
  // only now, so its cursor may reuse its buffer). A corrupt chunk leaves the file pending: the next call goes on
  // with the chunks after it.
  while (!pending_.empty()) {
    if (auto ok = advance(pending_.back()); !ok) {
      return ok.error();
    }
    pending_.pop_back();
  }
  if (heap_.empty()) {
    return false;
  }
  const Head head = heap_.top();
  heap_.pop();
  pending_.push_back(head.file);
  out.file = head.file;
  out.message = current_[head.file];
  return true;
}

}  // namespace axon::tools
