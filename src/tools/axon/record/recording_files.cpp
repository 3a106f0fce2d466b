// The files of a recording (recording_files.hpp).
#include "src/tools/axon/record/recording_files.hpp"

#include <algorithm>

namespace axon::tools {

std::string split_file_name(const std::string& path, std::size_t index) {
  const auto slash = path.rfind('/');
  const auto dot = path.rfind('.');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  // Appended, not "_" + to_string(): GCC 12 warns falsely (-Wrestrict) on that operator+ once inlined.
  std::string suffix = "_";
  suffix += std::to_string(index);
  if (!has_extension) {
    return path + suffix;
  }
  return path.substr(0, dot) + suffix + path.substr(dot);
}

Result<void> RecordingFiles::open() { return open_next(); }

Result<void> RecordingFiles::open_next() {
  const std::string path = splits() ? split_file_name(options_.path, paths_.size()) : options_.path;
  auto writer = mcap::Writer::create(path, options_.writer);
  if (!writer) {
    return writer.error();
  }
  writer_ = std::move(*writer);
  open_ = true;
  opened_at_ = std::chrono::steady_clock::now();
  paths_.push_back(path);
  schema_ids_.clear();
  channel_ids_.clear();
  for (std::size_t topic = 0; topic < topics_.size(); ++topic) {
    if (auto r = add_to_file(topic); !r) {
      return r;
    }
  }
  return {};
}

Result<void> RecordingFiles::add_topic(ChannelDefinition definition) {
  topics_.push_back(std::move(definition));
  return add_to_file(topics_.size() - 1);
}

Result<void> RecordingFiles::add_to_file(std::size_t topic) {
  const ChannelDefinition& definition = topics_[topic];
  std::uint16_t schema_id = 0;
  if (!definition.schema_encoding.empty()) {
    const auto known = std::find_if(schema_ids_.begin(), schema_ids_.end(),
                                    [&](const auto& entry) { return entry.first == definition.schema_key; });
    if (known != schema_ids_.end()) {
      schema_id = known->second;
    } else {
      auto id = writer_->add_schema(definition.schema_name, definition.schema_encoding, definition.schema_data);
      if (!id) {
        return id.error();
      }
      schema_id = *id;
      schema_ids_.emplace_back(definition.schema_key, schema_id);
    }
  }
  auto channel = writer_->add_channel(schema_id, definition.topic, definition.message_encoding, definition.metadata);
  if (!channel) {
    return channel.error();
  }
  channel_ids_.push_back(*channel);
  return {};
}

Result<std::size_t> RecordingFiles::add_message(std::size_t topic, mcap::MessageHeader header, mcap::Bytes payload) {
  header.channel_id = channel_ids_[topic];
  return writer_->add_message(header, payload);
}

Result<std::size_t> RecordingFiles::flush() { return writer_->flush(); }

Result<std::size_t> RecordingFiles::split_if_due(std::chrono::steady_clock::time_point now) {
  const bool by_size = options_.split_bytes > 0 && writer_->bytes_written() >= options_.split_bytes;
  const bool by_age = options_.split_duration.count() > 0 && now - opened_at_ >= options_.split_duration;
  if (!by_size && !by_age) {
    return std::size_t{0};
  }
  auto released = close();
  if (!released) {
    return released.error();
  }
  if (auto r = open_next(); !r) {
    return r.error();
  }
  return *released;
}

Result<std::size_t> RecordingFiles::close() {
  auto released = writer_->close();
  if (!released) {
    return released.error();
  }
  closed_bytes_ += writer_->bytes_written();
  open_ = false;
  return *released;
}

std::uint64_t RecordingFiles::bytes_written() const noexcept {
  return closed_bytes_ + (open_ ? writer_->bytes_written() : 0);
}

}  // namespace axon::tools
