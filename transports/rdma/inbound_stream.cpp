#include "transports/rdma/inbound_stream.hpp"

#include <algorithm>
#include <limits>

#include "transports/shm/chunk_header.hpp"

namespace axon::rdma {

InboundStream::InboundStream(std::uint32_t stream_id, const OpenFields& answer,
                             std::shared_ptr<shm::ShmPublisherPort> mirror, bool room_caps_grants,
                             std::uint32_t credits)
    : id_(stream_id),
      answer_(answer),
      mirror_(std::move(mirror)),
      room_caps_grants_(room_caps_grants),
      credits_(credits),
      granted_(credits) {
  pending_.reserve(credits);
}

InboundStream::~InboundStream() {
  for (const Granted& g : granted_) {
    if (g.used) {
      mirror_->discard(g.chunk);
    }
  }
}

std::uint32_t InboundStream::room(std::span<SubscriberFill> scratch) const noexcept {
  std::uint32_t allowed = credits_;
  if (room_caps_grants_) {
    // Each grant out may become one message in every subscriber's queue;
    // the queues only drain meanwhile (this mirror is their one producer).
    const std::size_t n = mirror_->subscriber_fill(scratch);
    for (std::size_t i = 0; i < n; ++i) {
      const SubscriberFill& fill = scratch[i];
      if (fill.quarantined) {
        continue;  // treated as drop-oldest: a publish never waits for it
      }
      const std::uint32_t free_room = fill.queued >= fill.depth ? 0 : fill.depth - fill.queued;
      allowed = std::min(allowed, free_room);
    }
  }
  return allowed > outstanding_ ? allowed - outstanding_ : 0;
}

LoanResult<LoanedChunk> InboundStream::loan() noexcept {
  return mirror_->loan(std::max<std::uint32_t>(answer_.largest_message_bytes, 1));
}

void InboundStream::record(GrantRef ref, const LoanedChunk& chunk, const GrantEntry& entry) noexcept {
  for (Granted& g : granted_) {
    if (!g.used) {
      const auto* header = static_cast<const shm::ChunkHeader*>(chunk.handle);
      g = Granted{.used = true, .ref = ref, .chunk_index = header->chunk_index, .chunk = chunk};
      ++outstanding_;
      pending_.push_back(entry);  // within the capacity reserved: pending <= outstanding <= credits
      return;
    }
  }
}

std::optional<LoanedChunk> InboundStream::take(GrantRef ref, std::uint32_t chunk_index) noexcept {
  for (Granted& g : granted_) {
    if (g.used && g.ref == ref) {
      if (g.chunk_index != chunk_index) {
        return std::nullopt;
      }
      const LoanedChunk chunk = g.chunk;
      g = Granted{};
      --outstanding_;
      return chunk;
    }
  }
  return std::nullopt;
}

void InboundStream::deliver(const LoanedChunk& chunk, std::uint32_t length) noexcept {
  // A subscriber whose queue stayed full is counted by the shared-memory
  // port (its status and counters), as with UDP's mirrors; grants are capped
  // so that a waiting one does not make this thread wait.
  (void)mirror_->publish(chunk, length, 0);
}

}  // namespace axon::rdma
