// The messages of several MCAP files as one stream in log-time order (docs/design/replay.md, "Merge"): a k-way
// merge of each file's MessageCursor (itself in log-time order) through a small heap of each file's next message.
// Among equal log times the file named first goes first. Only one message per file is held: the cursor's own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <queue>
#include <vector>

#include "axon/result.hpp"
#include "src/tools/mcap/reader.hpp"

namespace axon::tools {

/// A message and the file it came from (its index in the files given); `message.data` stays valid until the
/// next call of next().
struct FileMessage {
  std::size_t file = 0;
  mcap::Message message;
};

/// Thread safety: none. Allocates when it opens the cursors.
class MergedMessages {
 public:
  /// Over `readers` (not owned; they outlive this object), each from its first message; each file's chunks read
  /// `read_ahead_chunks` ahead by a thread of their own (0: none).
  MergedMessages(const std::vector<std::unique_ptr<mcap::Reader>>& readers, std::size_t read_ahead_chunks);

  /// The next message in log-time order: true, false at the end of every file, or the error of a file's corrupt
  /// chunk (the message it names; the other files go on with the next call).
  [[nodiscard]] Result<bool> next(FileMessage& out);
  /// Waits until every file's first chunks are read ahead (before a replay's clock starts).
  void wait_read_ahead();

 private:
  struct Head {
    std::uint64_t log_time;
    std::size_t file;
    bool operator>(const Head& other) const {
      return log_time != other.log_time ? log_time > other.log_time : file > other.file;
    }
  };
  /// Moves file `file`'s cursor on and queues its next message; an error for a corrupt chunk.
  [[nodiscard]] Result<void> advance(std::size_t file);

  std::vector<mcap::MessageCursor> cursors_;
  std::vector<mcap::Message> current_;  // each file's next message
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heap_;
  std::vector<std::size_t> pending_;  // files whose cursor must move on before the next pick
};

}  // namespace axon::tools
