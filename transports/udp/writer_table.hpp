// The writers of this participant's publishers: one per publisher of a topic
// that leaves the host, found by the id NACKs name.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "transports/shm/shm_ports.hpp"
#include "transports/udp/remote_hosts.hpp"
#include "transports/udp/udp_writer.hpp"

namespace axon::udp {

struct WriterEntry {
  std::shared_ptr<UdpWriter> writer;
  WriterTopic topic;
};

/// Thread safety: every method from any thread. Its mutex is a leaf: held
/// only inside these methods, which call no writer (callers act on the
/// shared_ptrs they get, after the table's mutex is released).
class WriterTable {
 public:
  /// A new writer for `local`'s topic, with the next writer id.
  WriterEntry add(const SendContext& context, std::shared_ptr<shm::ShmPublisherPort> local, WriterTopic topic,
                  std::uint32_t history_depth);
  void remove(const UdpWriter* writer);
  [[nodiscard]] std::vector<WriterEntry> all() const;
  /// One kEntryPublishers entry per topic with writers: what ANNOUNCEs add
  /// for remote graph events (docs/design/graph-events.md).
  [[nodiscard]] std::vector<AnnounceEntry> announce_entries() const;
  /// The writer a NACK names; null when it is gone (or never was).
  [[nodiscard]] std::shared_ptr<UdpWriter> find(std::uint32_t writer_id, std::uint64_t topic_id) const;

 private:
  mutable std::mutex mutex_;
  std::vector<WriterEntry> writers_;  ///< Guarded by mutex_.
  std::uint32_t next_writer_id_ = 1;  ///< Guarded by mutex_.
};

}  // namespace axon::udp
