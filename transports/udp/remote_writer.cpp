#include "transports/udp/remote_writer.hpp"

namespace axon::udp {

RemoteWriter::RemoteWriter(std::shared_ptr<shm::ShmPublisherPort> mirror, std::uint64_t sender_id,
                           std::uint32_t writer_id, std::uint64_t topic_id, NetworkCounterCells& counters) noexcept
    : mirror_(std::move(mirror)),
      sender_id_(sender_id),
      writer_id_(writer_id),
      topic_id_(topic_id),
      counters_(counters) {}

RemoteWriter::~RemoteWriter() {
  for (Held& held : held_) {
    if (held.valid) {
      mirror_->discard(held.chunk);
    }
  }
}

bool RemoteWriter::wants(std::uint64_t sequence) const noexcept {
  if (!reliable_) {
    return sequence > last_delivered_;
  }
  if (!synced_) {
    return false;  // the first heartbeat (sent before any DATA) says where to start; NACKs recover the rest
  }
  if (sequence < expected_ || sequence >= expected_ + kWindow) {
    return false;
  }
  const Held& held = held_[sequence % kWindow];
  return !(held.valid && held.sequence == sequence);
}

void RemoteWriter::on_data(std::uint64_t sequence, bool reliable, std::int64_t now_ns) noexcept {
  if (reliable != reliable_) {
    // The stream changed kind (a reliable subscriber came or went): start over.
    reliable_ = reliable;
    synced_ = false;
  }
  newest_seen_ = std::max(newest_seen_, sequence);
  last_heard_ns_ = now_ns;
  last_data_ns_ = now_ns;
}

void RemoteWriter::on_heartbeat(std::uint64_t first, std::uint64_t last, bool reliable, std::int64_t now_ns) noexcept {
  last_heard_ns_ = now_ns;
  if (reliable != reliable_) {
    reliable_ = reliable;
    synced_ = false;
  }
  newest_announced_ = std::max(newest_announced_, last);
  if (!reliable_) {
    return;
  }
  ack_asked_ = true;  // the writer may be waiting for room in its history
  if (!synced_) {
    synced_ = true;
    expected_ = first;
    drop_held_before_expected();
    flush();
  } else if (first > expected_) {
    // The writer says its stream to us starts after what we wait for: report
    // the gap and go on. axon's writers send this destination's stream start,
    // which does not move, so for them gaps come as GAP replies to NACKs; a
    // heartbeat that moved `first` forward still must not stall us.
    on_gap(expected_, first);
  }
}

void RemoteWriter::on_gap(std::uint64_t first, std::uint64_t end) noexcept {
  if (!reliable_ || !synced_ || end <= expected_ || first > expected_) {
    return;  // nothing we wait for (a gap after held messages comes with its own NACK round)
  }
  std::uint64_t lost = 0;
  for (std::uint64_t s = expected_; s < end; ++s) {
    const Held& held = held_[s % kWindow];
    lost += held.valid && held.sequence == s ? 0 : 1;
  }
  NetworkCounterCells::add(counters_.messages_lost, lost);
  // Held messages inside the gap were received after all: deliver them in order.
  while (expected_ < end) {
    Held& held = held_[expected_ % kWindow];
    if (held.valid && held.sequence == expected_) {
      deliver(held.chunk, held.bytes);
      held = Held{};
    }
    ++expected_;
  }
  flush();
}

void RemoteWriter::complete(std::uint64_t sequence, const LoanedChunk& chunk, std::uint32_t bytes) noexcept {
  if (!reliable_) {
    if (sequence <= last_delivered_) {
      NetworkCounterCells::add(counters_.messages_out_of_order);
      mirror_->discard(chunk);
      return;
    }
    last_delivered_ = sequence;
    deliver(chunk, bytes);
    return;
  }
  if (!wants(sequence)) {
    NetworkCounterCells::add(counters_.duplicates);
    mirror_->discard(chunk);
    return;
  }
  held_[sequence % kWindow] = Held{.valid = true, .sequence = sequence, .chunk = chunk, .bytes = bytes};
  flush();
}

void RemoteWriter::deliver(const LoanedChunk& chunk, std::uint32_t bytes) noexcept {
  NetworkCounterCells::add(counters_.messages_received);
  // A local subscriber that stayed full is counted by the shared-memory
  // port (its status and counters); the others got the message.
  (void)mirror_->publish(chunk, bytes, 0);
}

void RemoteWriter::flush() noexcept {
  for (;;) {
    Held& held = held_[expected_ % kWindow];
    if (!held.valid || held.sequence != expected_) {
      return;
    }
    const Held ready = held;
    held = Held{};
    ++expected_;
    deliver(ready.chunk, ready.bytes);
  }
}

void RemoteWriter::drop_held_before_expected() noexcept {
  for (Held& held : held_) {
    if (held.valid && held.sequence < expected_) {
      mirror_->discard(held.chunk);
      held = Held{};
    }
  }
}

}  // namespace axon::udp
