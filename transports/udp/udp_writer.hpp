// The network side of one publisher: sends each message once per remote host
// that subscribes (but those another transport carries to), keeps the pinned chunks of RELIABLE messages until every
// RELIABLE reader acknowledged them (a window of history_depth messages and of
// about what the readers' receive buffers hold),
// answers NACKs with resends or GAPs, and sends heartbeats.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "axon/transport.hpp"
#include "transports/shm/shm_ports.hpp"
#include "transports/udp/ack_inbox.hpp"
#include "transports/udp/send_context.hpp"
#include "transports/udp/send_pacer.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp {

/// A remote host's receiver of the writer's topic.
struct WriterDestination {
  std::uint64_t participant = 0;  ///< Its sender id.
  std::string host;
  Endpoint to;
  bool reliable = false;
  std::uint32_t subscribers = 0;
  std::uint64_t first_sequence = 0;  ///< First message it gets (set by the writer when it is added).
  std::uint64_t acked = 0;           ///< RELIABLE: it has every message before this one (its ACKs; the writer's).
};

/// The window: a RELIABLE message stays in the history, its chunk pinned,
/// until every RELIABLE destination acknowledged it (ACK datagrams, which the
/// receive thread queues in an AckInbox); a destination that is lost
/// (liveliness) stops holding it. A publish that finds the history full of
/// unacknowledged messages waits for ACKs (back-pressure), prompting the
/// readers with heartbeats, at most kAckTimeoutNs; then the message is
/// published on this host only and its status counts the lagging
/// destinations in timed_out and dropped. Flow control: the bytes kept must
/// also fit SendContext::window_bytes (half the receive buffer): beyond it
/// the datagrams would overrun the reader's socket, be lost and resent (and
/// the pacer would cut the rate), so a publish waits for ACKs the same way;
/// at least one message is always allowed, and when no ACK came for
/// kAckTimeoutNs with room left in the history the message goes anyway
/// (kept): each publish waits at most that long. A loan that finds the pool held by
/// the history waits the same way, then comes back exhausted(). Nothing a
/// live reader has not acknowledged is ever given up, so it never gets a GAP.
///
/// Pacing: a RELIABLE stream whose receiver loses datagrams (it NACKs what
/// has to be resent) is paced (SendPacer): publish() then sleeps before a
/// message until the pacer lets it go, without the mutex.
///
/// Thread safety: publish(), loan() and discard() from the publishing thread;
/// set_destinations(), on_nack() and send_heartbeats() from the participant's
/// threads. A mutex orders the two: it is held for a network publish (which
/// makes system calls anyway) and never by a publish without destinations.
/// It is a leaf: held only inside these methods, which call only the socket
/// and the local shared-memory port. A NACK that finds it held is queued
/// (deferred_mutex_, taken alone or under it) and answered by whoever
/// releases it (Hold), so the receive thread does not wait for a publish.
class UdpWriter {
 public:
  UdpWriter(SendContext context, std::shared_ptr<shm::ShmPublisherPort> local, std::uint64_t topic_id,
            std::uint32_t writer_id, std::uint32_t history_depth);
  ~UdpWriter();
  UdpWriter(const UdpWriter&) = delete;
  UdpWriter& operator=(const UdpWriter&) = delete;

  LoanResult<LoanedChunk> loan(std::size_t payload_bytes) noexcept;
  /// `other_pins`: pins another writer of the same publisher (RDMA, one per
  /// write it posts) takes on the chunk. The local publish sets them with
  /// this writer's own (one for the RELIABLE history) in one count
  /// (ShmPublisherPort::publish_pinned()), whatever this writer sends, so
  /// the last unpin of either writer frees the chunk.
  PublishResult publish(LoanedChunk chunk, std::size_t payload_bytes, std::size_t payload_offset,
                        std::uint32_t other_pins = 0) noexcept;

  /// Replaces the destinations, computed from the remote hosts' state
  /// `generation` (RemoteHosts); an older generation than the last applied is
  /// ignored (two threads may compute them concurrently). New destinations get
  /// a heartbeat at once (it tells them where their stream starts).
  void set_destinations(std::vector<WriterDestination> destinations, std::uint64_t generation);
  [[nodiscard]] std::vector<WriterDestination> destinations() const;
  /// The sender ids of the participants a writer's messages go to (one
  /// receiver per host), at each change.
  using DestinationListener = std::function<void(std::vector<std::uint64_t> participants)>;
  /// Whether another transport carries the messages to `host`.
  using CarriedHost = std::function<bool(std::string_view host)>;
  /// Another transport (RDMA) carries this writer's messages to the hosts
  /// `carried` names: from now on this writer sends them nothing (no data, no
  /// heartbeat) and tells `listener` which of its receiving participants are
  /// on such hosts, now and after each set_destinations(); it keeps sending
  /// to the others. Call before the writer gets destinations
  /// (Participant::add_writer() does, under its matching mutex). Once.
  void carry_elsewhere(DestinationListener listener, CarriedHost carried);
  /// `listener` is not called any more (returns after a call in progress).
  void stop_listening();
  void on_nack(const Nack& nack, Endpoint from) noexcept;
  /// An ACK of reader `participant` (the receive thread): queued, never waits.
  void on_ack(std::uint64_t participant, std::uint64_t next_sequence) noexcept {
    acks_.push(AckInbox::Entry{.participant = participant, .next_sequence = next_sequence});
  }
  void send_heartbeats() noexcept;

  /// How long a publish or loan waits for the readers' ACKs when the window is full.
  static constexpr std::int64_t kAckTimeoutNs = 100'000'000;
  /// While it waits, the lagging readers get a heartbeat this often (it asks for an ACK).
  static constexpr std::int64_t kAckPromptNs = 4'000'000;

  [[nodiscard]] std::uint64_t topic_id() const noexcept { return topic_id_; }
  [[nodiscard]] std::uint32_t writer_id() const noexcept { return writer_id_; }

 private:
  struct Kept {
    std::uint64_t sequence = 0;
    void* handle = nullptr;
    std::span<const std::byte> payload;
  };

  /// Sends fragments [first, end) of `message` to `to`; the caller holds mutex_.
  void send_fragments(std::uint64_t sequence, std::span<const std::byte> message, std::uint32_t first,
                      std::uint32_t end, std::span<const WriterDestination* const> to) noexcept;
  void send_heartbeat(const WriterDestination& destination) noexcept;
  /// set_destinations() for the destinations this writer sends to; the caller holds mutex_.
  void apply_destinations(std::vector<WriterDestination> destinations);
  /// Moves the participants of the destinations carried elsewhere out of
  /// `destinations` (all of them stay when nothing is carried); the caller holds mutex_.
  std::vector<std::uint64_t> split_carried(std::vector<WriterDestination>& destinations) const;

  /// A NACK's ranges, copied, and progress_ when it came.
  struct DeferredNack {
    std::array<NackRange, kMaxNackRanges> ranges;
    std::size_t count = 0;
    Endpoint from;
    std::uint64_t progress = 0;
  };
  static constexpr std::size_t kDeferredNacks = 4;
  /// mutex_, held; on release it answers the NACKs deferred meanwhile.
  class Hold {
   public:
    explicit Hold(UdpWriter& writer) : writer_(writer), lock_(writer.mutex_) {}
    Hold(UdpWriter& writer, std::try_to_lock_t) : writer_(writer), lock_(writer.mutex_, std::try_to_lock) {}
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    ~Hold() {
      if (!lock_.owns_lock()) {
        return;  // on_nack() deferred instead
      }
      lock_.unlock();
      std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with defer()'s
      writer_.answer_deferred();
    }
    [[nodiscard]] bool owns_lock() const noexcept { return lock_.owns_lock(); }
    void lock() { lock_.lock(); }

   private:
    UdpWriter& writer_;
    std::unique_lock<std::mutex> lock_;
  };
  /// Queues a NACK for the holder of mutex_; false when the queue is full.
  bool defer(const DeferredNack& request) noexcept;
  void answer_deferred() noexcept;
  /// Whether a message of `bytes` may go now: room in the history, and the
  /// kept (unacknowledged) bytes within the flow-control window; the caller holds mutex_.
  [[nodiscard]] bool window_open(std::size_t bytes) const noexcept;
  /// Sleeps until the pacer lets the next message go (at once when not
  /// paced); takes mutex_ only to ask. False when the window is closed.
  bool wait_for_pacer(std::size_t bytes) noexcept;
  /// Applies the ACKs queued, then gives back the kept messages every
  /// RELIABLE destination has; the caller holds mutex_.
  void apply_acks() noexcept;
  /// RELIABLE destinations that have not acknowledged the oldest kept message; the caller holds mutex_.
  [[nodiscard]] std::uint32_t lagging() const noexcept;
  /// Waits for ACKs until `ready()` (called under mutex_ after apply_acks())
  /// holds or kAckTimeoutNs passed; heartbeats prompt the lagging readers.
  template <class Ready>
  void wait_for_acks(Ready&& ready) noexcept;
  /// Resends or GAPs for `request`; the caller holds mutex_.
  void answer(const DeferredNack& request) noexcept;
  /// Sends message `sequence` to `to` batch by batch, recording progress_.
  void send_message(std::uint64_t sequence, std::span<const std::byte> message,
                    std::span<const WriterDestination* const> to) noexcept;
  [[nodiscard]] const Kept* find_kept(std::uint64_t sequence) const noexcept;
  [[nodiscard]] std::uint64_t oldest_kept() const noexcept;
  void drop_oldest_kept() noexcept;

  SendContext context_;
  std::shared_ptr<shm::ShmPublisherPort> local_;
  std::uint64_t topic_id_;
  std::uint32_t writer_id_;

  mutable std::mutex mutex_;
  std::vector<WriterDestination> destinations_;  ///< Those it sends to; guarded by mutex_.
  std::uint64_t destinations_generation_ = 0;    ///< Guarded by mutex_.
  CarriedHost carried_;                          ///< Guarded by mutex_; empty: it sends to every host.
  /// Called outside mutex_ (a leaf), under listener_mutex_, newest generation only.
  std::mutex listener_mutex_;
  DestinationListener listener_;           ///< Guarded by listener_mutex_.
  std::uint64_t listened_generation_ = 0;  ///< Guarded by listener_mutex_.
  /// Relaxed: publish() skips the mutex when there is no destination; a
  /// destination added meanwhile starts with the next message anyway. A thread
  /// that saw the route (Participant::remote_routes(), whose mutex the
  /// participant releases after set_destinations()) sees it set.
  std::atomic<bool> has_destinations_{false};
  std::uint64_t sequence_ = 0;  ///< Last sequence sent on the network; guarded by mutex_.
  /// How far publish() got: the low 32 bits of the sequence it sends (high
  /// half) and how many of its fragments went to the socket (low half), stored
  /// before each batch is handed to the kernel. on_nack() reads it before it
  /// waits for mutex_: what was not sent when the NACK came is sent anyway, so
  /// it is not resent (a receiver NACKs the rest of a message when its sender
  /// pauses in the middle of it, e.g. descheduled on a loaded host).
  std::atomic<std::uint64_t> progress_{0};
  SendPacer pacer_;               ///< Guarded by mutex_.
  std::vector<Kept> history_;     ///< Ring, capacity history_depth; guarded by mutex_.
  std::size_t history_head_ = 0;  ///< Oldest entry.
  std::size_t history_count_ = 0;
  std::size_t kept_bytes_ = 0;  ///< Payload bytes in the history; guarded by mutex_.
  // Scratch for one batch of headers (two variants: best effort, reliable),
  // the fragments' payloads and the batch's datagrams; guarded by mutex_. A
  // batch is what one sendmmsg call takes (OutgoingBatch::kMaxDatagrams).
  static constexpr std::size_t kBatch = 128;
  std::array<std::array<std::byte, kDataHeaderBytes>, 2 * kBatch> headers_{};
  std::array<std::span<const std::byte>, kBatch> payloads_{};
  std::vector<OutgoingDatagram> outgoing_;

  /// NACKs that came while mutex_ was held (a publish in progress): answered
  /// by whoever releases it next. A leaf lock, taken under mutex_ or alone.
  std::mutex deferred_mutex_;
  std::array<DeferredNack, kDeferredNacks> deferred_{};  ///< Guarded by deferred_mutex_.
  std::size_t deferred_count_ = 0;                       ///< Guarded by deferred_mutex_.
  std::atomic<bool> has_deferred_{false};

  AckInbox acks_;  ///< ACKs from the receive thread, applied under mutex_.
};

}  // namespace axon::udp
