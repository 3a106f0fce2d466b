// The MCAP file(s) of one recording: the first at PATH, or, when the recording is split (--split-size,
// --split-duration), PATH with an index before its extension (drive.mcap: drive_0.mcap, drive_1.mcap, ...).
// Each file is complete on its own: it gets the schemas and channels of every topic known when it opens, and of
// topics added later, before their first message.
//
// Thread safety: none (the recorder's one thread). Allocates when a file opens and a topic is added.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "axon/result.hpp"
#include "src/tools/axon/record/channel_mapping.hpp"
#include "src/tools/mcap/writer.hpp"

namespace axon::tools {

struct RecordingFilesOptions {
  std::string path;
  mcap::WriterOptions writer;
  std::uint64_t split_bytes = 0;               ///< > 0: a new file once this many bytes are written to the current one.
  std::chrono::nanoseconds split_duration{0};  ///< > 0: a new file when the current one is this old.
};

/// The file name of part `index` of a split recording of `path`: "drive.mcap" -> "drive_3.mcap" ("out" ->
/// "out_3").
[[nodiscard]] std::string split_file_name(const std::string& path, std::size_t index);

class RecordingFiles {
 public:
  explicit RecordingFiles(RecordingFilesOptions options) : options_(std::move(options)) {}

  /// Opens the first file.
  [[nodiscard]] Result<void> open();
  /// Adds a topic (its index is the count of topics added before) to the open file.
  [[nodiscard]] Result<void> add_topic(ChannelDefinition definition);
  /// Adds a message of topic `topic` (mcap::Writer::add_message's contract); returns the payloads released.
  [[nodiscard]] Result<std::size_t> add_message(std::size_t topic, mcap::MessageHeader header, mcap::Bytes payload);
  /// Writes the open chunk.
  [[nodiscard]] Result<std::size_t> flush();
  /// When the open file reached its size or age, closes it (releasing every payload) and opens the next.
  [[nodiscard]] Result<std::size_t> split_if_due(std::chrono::steady_clock::time_point now);
  /// Closes the open file with its summary; returns the payloads that released.
  [[nodiscard]] Result<std::size_t> close();

  /// Bytes written to every file so far.
  [[nodiscard]] std::uint64_t bytes_written() const noexcept;
  [[nodiscard]] const std::vector<std::string>& paths() const noexcept { return paths_; }

 private:
  [[nodiscard]] Result<void> open_next();
  [[nodiscard]] Result<void> add_to_file(std::size_t topic);
  [[nodiscard]] bool splits() const noexcept { return options_.split_bytes > 0 || options_.split_duration.count() > 0; }

  RecordingFilesOptions options_;
  std::unique_ptr<mcap::Writer> writer_;
  bool open_ = false;  // writer_ is the open file (not closed yet)
  std::chrono::steady_clock::time_point opened_at_;
  std::uint64_t closed_bytes_ = 0;  // of the files closed so far
  std::vector<std::string> paths_;
  std::vector<ChannelDefinition> topics_;
  // Of the open file: schema ids by schema key, channel ids by topic index.
  std::vector<std::pair<std::string, std::uint16_t>> schema_ids_;
  std::vector<std::uint16_t> channel_ids_;
};

}  // namespace axon::tools
