// The chunks one link's posted writes read, until the card is done with them
// (docs/design/rdma-transport.md, "Faults", "Built: the link"): each posted
// write is recorded with the send-queue sequence of its last work request
// (PostedWrite::sequence). RC completes a send queue in order, so a send
// completion of sequence s (a write's or a control SEND's, success or flush)
// means every write up to s was read: take_done(s) hands those chunks back,
// oldest first, for unpinning. Once the queue pair is destroyed, take_any()
// hands back the rest.
//
// Sequences count modulo 2^40 (work_request_id.hpp): an entry is "at or
// before s" when s is less than half that range ahead of it. The ledger holds
// at most the send depth's entries, so the two can never be confused.
//
// Thread safety: none (the link's mutex). The constructor allocates; nothing
// else does (a SentChunk moves in and out).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "transports/rdma/link_port.hpp"
#include "transports/rdma/work_request_id.hpp"

namespace axon::rdma {

class WriteLedger {
 public:
  /// Room for `capacity` writes in flight (the link's send depth: every
  /// write takes at least one work request). Allocates.
  explicit WriteLedger(std::uint32_t capacity) : entries_(capacity) {}

  /// Records `chunk` as read by the write whose last work request has
  /// `sequence`; leaves `chunk` empty. False (and `chunk` untouched) when full.
  [[nodiscard]] bool record(std::uint64_t sequence, SentChunk& chunk) noexcept {
    if (count_ == entries_.size()) {
      return false;
    }
    Entry& e = entries_[(head_ + count_) % entries_.size()];
    e.sequence = sequence & kWorkSequenceMask;
    e.chunk = std::exchange(chunk, SentChunk{});
    ++count_;
    return true;
  }

  /// The oldest chunk whose write is at or before `sequence` (done), or an
  /// empty one when there is none.
  [[nodiscard]] SentChunk take_done(std::uint64_t sequence) noexcept {
    if (count_ == 0 || !at_or_before(entries_[head_].sequence, sequence)) {
      return {};
    }
    return pop();
  }

  /// The oldest chunk, done or not (the queue pair is gone), or an empty one.
  [[nodiscard]] SentChunk take_any() noexcept { return count_ == 0 ? SentChunk{} : pop(); }

  /// The tag of the next record() (its position; in the write's wr_id).
  [[nodiscard]] std::uint16_t next_tag() const noexcept {
    return static_cast<std::uint16_t>((head_ + count_) % entries_.size());
  }
  [[nodiscard]] std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(count_); }
  [[nodiscard]] std::uint32_t capacity() const noexcept { return static_cast<std::uint32_t>(entries_.size()); }

 private:
  struct Entry {
    std::uint64_t sequence = 0;
    SentChunk chunk;
  };

  [[nodiscard]] static bool at_or_before(std::uint64_t entry, std::uint64_t sequence) noexcept {
    return ((sequence - entry) & kWorkSequenceMask) < (std::uint64_t{1} << (kWorkSequenceBits - 1));
  }
  SentChunk pop() noexcept {
    SentChunk chunk = std::exchange(entries_[head_].chunk, SentChunk{});
    head_ = (head_ + 1) % entries_.size();
    --count_;
    return chunk;
  }

  std::vector<Entry> entries_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

}  // namespace axon::rdma
