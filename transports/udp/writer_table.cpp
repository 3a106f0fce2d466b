#include "transports/udp/writer_table.hpp"

#include <algorithm>

namespace axon::udp {

WriterEntry WriterTable::add(const SendContext& context, std::shared_ptr<shm::ShmPublisherPort> local,
                             WriterTopic topic, std::uint32_t history_depth) {
  std::lock_guard guard(mutex_);
  auto writer =
      std::make_shared<UdpWriter>(context, std::move(local), topic.topic_id, next_writer_id_++, history_depth);
  writers_.push_back(WriterEntry{.writer = std::move(writer), .topic = std::move(topic)});
  return writers_.back();
}

void WriterTable::remove(const UdpWriter* writer) {
  std::lock_guard guard(mutex_);
  std::erase_if(writers_, [&](const WriterEntry& entry) { return entry.writer.get() == writer; });
}

std::vector<WriterEntry> WriterTable::all() const {
  std::lock_guard guard(mutex_);
  return writers_;
}

std::vector<AnnounceEntry> WriterTable::announce_entries() const {
  std::vector<AnnounceEntry> out;
  std::lock_guard guard(mutex_);
  for (const WriterEntry& entry : writers_) {
    auto same = std::find_if(out.begin(), out.end(),
                             [&](const AnnounceEntry& e) { return e.topic_id == entry.topic.topic_id; });
    if (same == out.end()) {
      out.push_back(AnnounceEntry{.topic_id = entry.topic.topic_id,
                                  .type_hash = entry.topic.type.hash,
                                  .type_name_hash = detail::fnv1a(entry.topic.type.name),
                                  .flags = kEntryPublishers,
                                  .subscribers = 0});
      same = out.end() - 1;
    }
    ++same->subscribers;
  }
  return out;
}

std::shared_ptr<UdpWriter> WriterTable::find(std::uint32_t writer_id, std::uint64_t topic_id) const {
  std::lock_guard guard(mutex_);
  const auto found = std::find_if(writers_.begin(), writers_.end(), [&](const WriterEntry& entry) {
    return entry.writer->writer_id() == writer_id && entry.writer->topic_id() == topic_id;
  });
  return found != writers_.end() ? found->writer : nullptr;
}

}  // namespace axon::udp
