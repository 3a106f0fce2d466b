// The receive half of the RDMA streams (docs/design/rdma-transport.md,
// "Streams and credits", "Faults"): the LinkHandler part that turns the
// streams a peer opens towards this node into local mirror publishers, hands
// the peer credits (grants of chunks the mirrors lend) and delivers each
// written chunk in place, through its mirror, to the subscribers of this host.
//
//   OPEN   the topic is looked up (the composition root's InboundLookup):
//          unknown, or another type hash -> CLOSE; else a mirror is
//          advertised, OPEN answers (this host's strictest subscriber QoS),
//          and up to `credits` grants go out in one GRANT;
//   write  the chunk is published through the mirror, its slot released,
//          and a new chunk granted; the grants go out in one GRANT once half
//          the credits are pending (grant_batch()), so the sender keeps at
//          least the other half: before the next poll of the completion
//          queue (before_poll(), or the RDMA thread's tick()), so that the
//          GRANT does not delay the subscriber that polled this write; at
//          once when the sender has no credit left;
//   WANT   the sender waits for credit: every pending grant goes out, and
//          tick() retries while none can be made;
//   CLOSE  the stream's granted chunks are reclaimed, its mirror dropped.
//
// Grants are capped per stream by `credits`, by the free room of the mirror's
// fullest subscriber queue when the topic's subscribers may make a publish
// wait (RELIABLE, block-publisher), by the mirror's loans, by
// kLinkGrantBudget per link over all its streams and by the grant table's
// slots: a delivery never waits, and nothing reaches the pool that was not
// granted.
//
// Thread safety: every method on the RDMA thread (the holder of the
// participant's CompletionTurn), counters() from any. OPEN
// allocates (the mirror, the stream's tables); writes, grants, WANT and tick()
// do not allocate, lock or make a system call (beyond what the link's
// send_control() does). Streams whose id says they are this node's own
// (stream_is_senders_own()) are the send half's: ignored here.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "axon/result.hpp"
#include "transports/rdma/control_message.hpp"
#include "transports/rdma/inbound_counters.hpp"
#include "transports/rdma/inbound_stream.hpp"
#include "transports/rdma/link_port.hpp"
#include "transports/shm/shm_transport.hpp"

namespace axon::rdma {

/// topic id -> the topic when this node receives it over RDMA; nullopt
/// otherwise. Called on the RDMA thread at OPEN only.
using InboundLookup = std::function<std::optional<InboundTopic>(std::uint64_t topic_id)>;

struct InboundSettings {
  /// rdma.credits: grants kept out per stream (1..kLinkGrantBudget).
  std::uint32_t credits = 8;
  /// rdma.refill_poll_us: how often tick() should run while a sender waits
  /// for credit (at least 1).
  std::uint32_t refill_poll_us = 100;
};

class InboundStreams final : public LinkHandler {
 public:
  /// `shm`: the node's transport, where the mirrors are advertised and
  /// whose own pool the grants lend from. Errors name the setting
  /// (rdma.credits, rdma.refill_poll_us).
  [[nodiscard]] static Result<std::unique_ptr<InboundStreams>> create(std::shared_ptr<shm::ShmTransport> shm,
                                                                      InboundLookup lookup,
                                                                      const InboundSettings& settings);
  ~InboundStreams() override;
  InboundStreams(const InboundStreams&) = delete;
  InboundStreams& operator=(const InboundStreams&) = delete;

  // LinkHandler
  void on_link_up(LinkPort& link) noexcept override;
  void on_control(LinkPort& link, const ControlMessage& message) noexcept override;
  void on_write(LinkPort& link, const ResolvedWrite& write) noexcept override;
  void on_link_lost(LinkPort& link) noexcept override;
  /// Sends the regrants a write put off (a batch due).
  void before_poll() noexcept override;

  /// Retries what waits: control messages the send queue had no room for,
  /// and grants of streams whose sender waits for credit (WANT; answered by
  /// the first grant that goes out). True while something still waits: call
  /// it again after refill_period() on the RDMA thread; false: not before
  /// the next link event.
  bool tick() noexcept;
  [[nodiscard]] std::chrono::microseconds refill_period() const noexcept {
    return std::chrono::microseconds(settings_.refill_poll_us);
  }

  /// Streams open now over all links (the RDMA thread).
  [[nodiscard]] std::size_t stream_count() const noexcept;
  [[nodiscard]] InboundCountersSnapshot counters() const noexcept { return counters_.snapshot(); }

 private:
  struct Link {
    LinkPort* port = nullptr;
    std::map<std::uint32_t, std::unique_ptr<InboundStream>> streams;
    std::uint32_t grants_out = 0;           ///< Over all its streams (kLinkGrantBudget).
    std::vector<std::uint32_t> closes_due;  ///< CLOSE answers the send queue had no room for.
  };

  InboundStreams(std::shared_ptr<shm::ShmTransport> shm, InboundLookup lookup, const InboundSettings& settings);

  Link& link_of(LinkPort& port);
  [[nodiscard]] Link* find_link(const LinkPort& port) noexcept;
  void open(Link& link, const ControlMessage& message);
  void refuse(Link& link, std::uint32_t stream_id);
  void close(Link& link, std::uint32_t stream_id) noexcept;
  /// Loans and grants up to the stream's room (recorded, pending).
  void refill(Link& link, InboundStream& stream) noexcept;
  /// Sends what the stream has pending (its OPEN answer, then one GRANT).
  void flush(Link& link, InboundStream& stream) noexcept;
  /// Sends the CLOSE answers still due; false while the send queue is full.
  bool flush_closes(Link& link) noexcept;
  /// One encoded control message; false when the link had no room (kept
  /// for tick()) or is broken (its loss follows).
  bool send(Link& link, std::size_t bytes) noexcept;

  std::shared_ptr<shm::ShmTransport> shm_;
  InboundLookup lookup_;
  /// Regrants go out once this many are pending (half a stream's credits,
  /// so its sender keeps the other half), at once on WANT or an OPEN
  /// answer: one GRANT per batch instead of one per message (on rxe, every
  /// control message is a packet the CPU processes, on the receiving
  /// subscriber's path when it polls the completion queue itself).
  [[nodiscard]] std::size_t grant_batch() const noexcept { return std::max<std::uint32_t>(1, settings_.credits / 2); }

  InboundSettings settings_;
  PeerRegion own_region_;                 ///< The pool's chunks: every grant lies inside.
  std::uint32_t largest_receivable_ = 0;  ///< The largest class a grant can name (below 256 MiB).
  std::vector<std::unique_ptr<Link>> links_;
  /// A write left a batch of regrants for before_poll() or tick().
  bool regrants_due_ = false;
  std::vector<SubscriberFill> fill_scratch_;            ///< kMaxSubscribersPerPublisher entries.
  std::array<std::byte, kControlSlotBytes> message_{};  ///< Encoding buffer.
  InboundCounters counters_;
};

}  // namespace axon::rdma
