// One stream a peer opened towards this node, on the receive side
// (docs/design/rdma-transport.md, "Streams and credits"): its local mirror
// publisher, the chunks the mirror lent for its grants (each by the grant
// table's slot), the grants not sent yet, and whether its sender waits for
// credit (WANT).
//
// Thread safety: none; the RDMA thread owns it (InboundStreams). The
// constructor allocates the tables (at OPEN); nothing else allocates.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "axon/transport.hpp"
#include "transports/rdma/control_message.hpp"
#include "transports/rdma/grant_table.hpp"
#include "transports/shm/shm_ports.hpp"

namespace axon::rdma {

/// A topic this node receives over RDMA, as the composition root describes
/// it: what the mirror advertises, and the strictest QoS of the host's
/// subscribers of it (what the sender does without credit, in OPEN's
/// answer).
struct InboundTopic {
  TopicDescriptor descriptor;
  WireReliability reliability = WireReliability::kBestEffort;
  WireOverflow overflow = WireOverflow::kDefault;
  std::uint64_t block_timeout_ns = 0;  ///< At most INT64_MAX (OPEN's rule).
};

/// Whether a publish into subscribers of this QoS may wait for queue room:
/// then a stream's grants are capped by that room.
[[nodiscard]] constexpr bool delivery_may_wait(const InboundTopic& topic) noexcept {
  return topic.reliability == WireReliability::kReliable || topic.overflow == WireOverflow::kBlockPublisher;
}

class InboundStream {
 public:
  /// `answer`: the OPEN this side answers with (the sender's half, this
  /// host's QoS). `room_caps_grants`: delivery_may_wait() of the topic.
  InboundStream(std::uint32_t stream_id, const OpenFields& answer, std::shared_ptr<shm::ShmPublisherPort> mirror,
                bool room_caps_grants, std::uint32_t credits);
  /// Gives back every chunk still recorded (the owner reclaimed their grant
  /// slots first); the mirror goes with it: local subscribers see the
  /// publisher leave.
  ~InboundStream();
  InboundStream(const InboundStream&) = delete;
  InboundStream& operator=(const InboundStream&) = delete;

  [[nodiscard]] std::uint32_t id() const noexcept { return id_; }
  [[nodiscard]] const OpenFields& answer() const noexcept { return answer_; }
  /// The sender's largest message so far (a repeated OPEN may raise it):
  /// the bytes each grant's loan asks for.
  void set_largest_message_bytes(std::uint32_t bytes) noexcept { answer_.largest_message_bytes = bytes; }

  /// Grants out now (granted, not yet written), sent or not.
  [[nodiscard]] std::uint32_t outstanding() const noexcept { return outstanding_; }
  /// How many more grants may go out now: up to the credits and, when room
  /// caps them, up to the free room of the fullest (not quarantined) queue
  /// among the mirror's subscribers, counting the grants out, so that no
  /// delivery waits. `scratch` holds one entry per subscriber at most
  /// (kMaxSubscribersPerPublisher).
  [[nodiscard]] std::uint32_t room(std::span<SubscriberFill> scratch) const noexcept;

  /// A chunk for the next grant, from the mirror.
  [[nodiscard]] LoanResult<LoanedChunk> loan() noexcept;
  /// Gives back a loaned chunk that was not granted, or whose grant was reclaimed.
  void discard(const LoanedChunk& chunk) noexcept { mirror_->discard(chunk); }
  /// Records a granted chunk (its table slot `ref`) and queues its entry for
  /// the next GRANT. Only while outstanding() < credits.
  void record(GrantRef ref, const LoanedChunk& chunk, const GrantEntry& entry) noexcept;
  /// The chunk granted in `ref`, removed from the records; nullopt when
  /// this stream granted nothing there, or a chunk of another index.
  [[nodiscard]] std::optional<LoanedChunk> take(GrantRef ref, std::uint32_t chunk_index) noexcept;
  /// Publishes a written chunk through the mirror, in place.
  void deliver(const LoanedChunk& chunk, std::uint32_t length) noexcept;

  /// Grant entries recorded and not yet in a GRANT the link took.
  [[nodiscard]] std::span<const GrantEntry> pending() const noexcept { return pending_; }
  void clear_pending() noexcept { pending_.clear(); }

  /// Messages the sender says wait for credit (its last WANT; 0: none).
  [[nodiscard]] std::uint32_t want() const noexcept { return want_; }
  void set_want(std::uint32_t messages_waiting) noexcept { want_ = messages_waiting; }
  /// The OPEN answer is still to be sent (the send queue was full).
  [[nodiscard]] bool answer_pending() const noexcept { return answer_pending_; }
  void set_answer_pending(bool pending) noexcept { answer_pending_ = pending; }

 private:
  struct Granted {
    bool used = false;
    GrantRef ref;
    std::uint32_t chunk_index = 0;
    LoanedChunk chunk;
  };

  std::uint32_t id_;
  OpenFields answer_;
  std::shared_ptr<shm::ShmPublisherPort> mirror_;
  bool room_caps_grants_;
  std::uint32_t credits_;
  std::uint32_t outstanding_ = 0;
  std::uint32_t want_ = 0;
  bool answer_pending_ = true;
  std::vector<Granted> granted_;     ///< `credits` records, allocated once.
  std::vector<GrantEntry> pending_;  ///< Capacity `credits`, reserved once.
};

}  // namespace axon::rdma
