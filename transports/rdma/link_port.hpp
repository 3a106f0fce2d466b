// What the streams of one RDMA link use of it, and what the link tells them
// (docs/design/rdma-transport.md, "Streams and credits", "Faults"). The
// participant's RdmaLink implements LinkPort over one connected RC queue pair;
// the host tests connect two fakes in one process (tests/unit/rdma/loopback_link.hpp).
//
// Two halves use a link, both through LinkHandler on the participant's RDMA
// thread: the receive side (streams a peer opens towards this node: mirrors,
// grants, delivery) and the send side (streams this node's publishers open
// towards the peer: credits, writes). Both directions share the queue pair,
// so a stream id says whose stream it is (stream_is_senders_own()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "axon/result.hpp"
#include "transports/rdma/control_message.hpp"
#include "transports/rdma/control_ring.hpp"
#include "transports/rdma/grant_table.hpp"
#include "transports/rdma/granted_slots.hpp"
#include "transports/rdma/post_write.hpp"
#include "transports/shm/shm_ports.hpp"

namespace axon::rdma {

/// Grants a receiver keeps out on one link at once, over all its streams:
/// each may become one write, which consumes one posted receive, so the
/// receive queue holds this many receives plus kLinkControlReceives.
inline constexpr std::uint32_t kLinkGrantBudget = 64;
/// Receives for the peer's control messages (OPEN, CLOSE, GRANT, WANT).
inline constexpr std::uint32_t kLinkControlReceives = 32;
/// Control messages this side may have in flight (send slots).
inline constexpr std::uint32_t kLinkControlSends = 32;
/// The send queue: writes in flight (each one work request per part, at
/// most kMaxWriteChainParts) and control SENDs.
inline constexpr std::uint32_t kLinkSendDepth = 256;

/// Stream ids: the side that connected the link (rdma_cm active side)
/// numbers the streams it sends 1, 2, 3 ... below 2^31, the side that
/// accepted numbers its own from 2^31 up, so an OPEN, GRANT, WANT or CLOSE of
/// either direction is never ambiguous on the shared queue pair.
inline constexpr std::uint32_t kPassiveStreamBit = std::uint32_t{1} << 31;
/// The first stream id a side sends on a link.
[[nodiscard]] constexpr std::uint32_t first_stream_id(bool link_active) noexcept {
  return link_active ? 1U : kPassiveStreamBit | 1U;
}
/// Whether `stream_id` is one the side (`link_active`) sends, i.e. a
/// message naming it came from the stream's receiver (OPEN answer, GRANT).
[[nodiscard]] constexpr bool stream_is_senders_own(bool link_active, std::uint32_t stream_id) noexcept {
  return ((stream_id & kPassiveStreamBit) == 0) == link_active;
}

/// A chunk of this node's pool that a posted write reads. It is pinned
/// (ShmPublisherPort::publish_pinned()) and must not be reused before the
/// card has read it: the link unpins it through `port` after the write's
/// send completion, or when the queue pair is gone (flushed or destroyed).
struct SentChunk {
  std::shared_ptr<shm::ShmPublisherPort> port;
  void* handle = nullptr;  ///< LoanedChunk::handle.
  [[nodiscard]] bool empty() const noexcept { return port == nullptr; }
};

/// One message to write into a granted chunk of the peer: local bytes inside
/// this node's registered pool, and the grant (address, immediate) it goes to.
/// The link adds the keys (its lkey, the peer's rkey) and the chain.
struct LinkWrite {
  const std::byte* local = nullptr;
  std::uint32_t length = 0;
  std::uint64_t remote_address = 0;  ///< GrantEntry::address.
  std::uint32_t immediate = 0;       ///< encode_immediate() of the grant's class, slot and `length`.
};

/// Thread safety: send_control() and post_write() from any thread (a
/// process-local mutex per link orders them with the RDMA thread's reposts;
/// it is never held across a call to another process); grants(), peer() and
/// peer_region() from the RDMA thread; granted_slots() as GrantedSlots says.
class LinkPort {
 public:
  virtual ~LinkPort() = default;

  /// The peer participant's sender id.
  [[nodiscard]] virtual std::uint64_t peer() const noexcept = 0;
  /// Whether this side connected the link (stream ids, above).
  [[nodiscard]] virtual bool active() const noexcept = 0;
  /// The peer's registered pool (its connection private data): every grant it
  /// sends lies inside (parse_control() checked).
  [[nodiscard]] virtual PeerRegion peer_region() const noexcept = 0;

  /// Sends one encoded control message (copied into a send slot; at most
  /// kControlSlotBytes). kSendQueueFull: no slot or no room now, an outcome
  /// (retry after completions). An error: the link is broken (it ends).
  [[nodiscard]] virtual Result<SendOutcome> send_control(std::span<const std::byte> message) noexcept = 0;

  /// Posts `write`, signalled. Takes `pinned` (leaves it empty) when it
  /// returns kPosted or an error (the link unpins it once the card is done
  /// with it); kSendQueueFull and kTooManyParts leave it to the caller.
  [[nodiscard]] virtual Result<WriteOutcome> post_write(const LinkWrite& write, SentChunk& pinned) noexcept = 0;

  /// The receive side's table of what this node granted the peer.
  [[nodiscard]] virtual GrantTable& grants() noexcept = 0;
  /// The send side's check that the peer never grants one slot twice
  /// (capacity kLinkGrantBudget: the peer's budget, the same constant).
  [[nodiscard]] virtual GrantedSlots& granted_slots() noexcept = 0;

  /// A broken peer (a refused control message or write, a duplicate grant):
  /// the link is torn down after the current callback; `why` is logged.
  virtual void fail(std::string_view why) noexcept = 0;
};

/// What a link tells its streams, on the RDMA thread, in this order: up,
/// then any number of control messages and writes, then lost (once).
class LinkHandler {
 public:
  virtual ~LinkHandler() = default;
  /// The link is connected and its peer known; streams may open on it.
  virtual void on_link_up(LinkPort& link) noexcept = 0;
  /// A control message the parser accepted (its GRANT entries point into a
  /// receive buffer that is reposted after this returns: copy what is kept).
  virtual void on_control(LinkPort& link, const ControlMessage& message) noexcept = 0;
  /// A write the link's grant table accepted (link.grants(): its slot is
  /// written); the handler delivers the chunk and releases the slot.
  virtual void on_write(LinkPort& link, const ResolvedWrite& write) noexcept = 0;
  /// The link ended. Its queue pair is destroyed: nothing more lands in this
  /// pool from it, and every chunk its writes read was unpinned. The handler
  /// gives back what it granted (link.grants().reclaim_all()), forgets its
  /// credits, closes its streams; `link` is destroyed after this returns.
  virtual void on_link_lost(LinkPort& link) noexcept = 0;
  /// Before a spinner's next poll of the completion queue (and on each pass
  /// of the RDMA thread, through its tick): what the handler put off so as
  /// not to delay the delivery of the last poll (regrants).
  virtual void before_poll() noexcept {}
};

}  // namespace axon::rdma
