// The RDMA side of one publisher (docs/design/rdma-transport.md, "Streams and
// credits", "The sender's chunk", "QoS without credit"): a stream on each
// RDMA link whose peer receives the topic (a destination), the credits its
// receiver grants, and each message sent as one RDMA WRITE WITH IMMEDIATE
// from the published chunk itself, pinned until the card has read it.
//
// publish() takes one credit per destination, publishes locally with one pin
// per write it is about to post (ShmPublisherPort::publish_pinned()), and
// posts the writes; the link unpins each chunk on its send completion. A
// destination without credit gets what its receiver asked for in its OPEN
// answer (NoCreditPolicy): the message is dropped, kept pending (one per
// destination, sent by the RDMA thread when a GRANT comes), or the publisher
// waits for a grant up to the receiver's block timeout.
//
// Thread safety / Memory ordering: publish() from the publisher's thread (one
// at a time, as ShmPublisherPort). The streams side (add_destination(),
// remove_destination(), on_grant(), on_open_answer(), on_link_lost()) is
// called by OutboundStreams under its mutex, from the RDMA thread or a thread
// registering the writer. The publisher reads the destinations without a
// lock, in short sections between enter() and leave():
//   - Each slot's `destination` pointer is stored with release by the
//     streams side after the destination is built; the publisher loads it
//     with acquire inside a section.
//   - Each slot's `generation` is bumped (seq_cst) by the streams side
//     before it empties the slot; the publisher reads it (seq_cst) in each
//     section that uses the destination and gives the destination up when it
//     changed since it first read it.
//   - `epoch_` is odd while the publisher is in a section: enter() stores it
//     seq_cst (so the store is ordered before its generation loads, Dekker
//     with the streams side's bump before its epoch load), leave() stores it
//     with release (pairs with the streams side's acquire load: every use of
//     a destination in the section happens before it is freed). The streams
//     side frees a destination only once the epoch it loaded after the bump
//     was even or has moved on, so a section never outlives its destination,
//     nor the LinkPort it names (the link is destroyed after on_link_lost()).
// A section never sleeps and never takes the streams' mutex: a block wait
// sleeps outside any section, so the streams side waits only for a post or
// a credit take in progress. A post that runs while on_link_lost() waits for
// it meets a queue pair that is gone: the link must refuse it with an error
// and unpin the chunk itself (LinkPort::post_write()).
//
// Allocation: the constructor and add_destination() allocate; publish() and
// the GRANT path do not.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "axon/outcome.hpp"
#include "axon/result.hpp"
#include "axon/transport.hpp"
#include "src/base/spin_flag.hpp"
#include "transports/rdma/control_message.hpp"
#include "transports/rdma/credit_fifo.hpp"
#include "transports/rdma/link_port.hpp"
#include "transports/shm/shm_ports.hpp"

namespace axon::rdma {

/// Destinations (receiving hosts on RDMA links) of one writer at most.
inline constexpr std::uint32_t kMaxRdmaDestinations = 32;

/// How long after its OPEN a new stream's messages wait for the receiver's
/// answer (and the grants that come with it): the default block timeout of
/// a RELIABLE subscriber. Past it, they are dropped (counted) until it comes.
/// Also how long after discovery names a receiving host its messages wait
/// for a stream to reach it (its link connecting, then the OPEN).
inline constexpr std::int64_t kOpenAnswerWaitNs = 100'000'000;

/// What a writer does for a destination that has no credit when a message
/// is published (design, "QoS without credit").
enum class NoCreditPolicy : std::uint8_t {
  kDrop,      ///< Best effort, reject newest: dropped for that host (credit_drops).
  kKeepLast,  ///< Drop oldest, latest only: one message pending, an older one evicted.
  kBlock,     ///< Block publisher, or RELIABLE by default: wait for a grant up to the block timeout.
  /// No answer to the OPEN yet (the receiver's QoS is not known): wait for
  /// it up to kOpenAnswerWaitNs after the OPEN, then drop (credit_drops, not
  /// timed_out) until it comes.
  kAwaitAnswer,
};
/// The policy for a receiver's QoS (its OPEN answer). kDefault means block
/// for RELIABLE and drop for best effort (the receiver names keep-last as
/// kDropOldest).
[[nodiscard]] NoCreditPolicy no_credit_policy(const OpenFields& receiver_qos) noexcept;

/// What the writer identifies itself with in its OPEN.
struct RdmaWriterFields {
  std::uint64_t topic_id = 0;
  std::uint64_t type_hash = 0;
  std::uint32_t writer_id = 0;
  /// The topic's max_payload_bytes, or the class the publisher loans.
  std::uint32_t largest_message_bytes = 0;
};

/// Counts since construction (each a relaxed atomic: a statistic; the
/// publisher and the RDMA thread both add to them).
struct RdmaWriterCounters {
  std::uint64_t messages_written = 0;  ///< Writes posted (one per message per host).
  std::uint64_t bytes_written = 0;
  std::uint64_t credit_drops = 0;  ///< Dropped for a host without credit (kDrop).
  std::uint64_t evicted = 0;       ///< Pending messages replaced by a newer one (kKeepLast).
  std::uint64_t timed_out = 0;     ///< Waits for credit that ran out (kBlock).
  std::uint64_t wants_sent = 0;
  /// Dropped because the post failed (send queue full, a chain too long, a
  /// broken link) or the destination went away under the message.
  std::uint64_t send_failures = 0;
  /// Pending messages dropped because their destination went (CLOSE, a lost link).
  std::uint64_t pending_dropped = 0;
  /// Dropped for a host discovery named as a receiver but no stream reaches
  /// yet (its link not up, or its receiver refused the stream): one per host.
  std::uint64_t no_stream_drops = 0;
};

/// Publishes a message on this host with the pins of the writes about to be
/// posted, for a publisher that other writers send too (the UDP writer of
/// the hosts reached by UDP): it adds its own pins to the same count and
/// sends its copies (rdma_publisher_port.hpp). Without one, the writer
/// publishes through its ShmPublisherPort.
class LocalPublish {
 public:
  /// ShmPublisherPort::publish_pinned() with `pins` and whatever the other
  /// writer adds; a failure means nothing was published nor pinned.
  virtual PublishResult publish_pinned(LoanedChunk chunk, std::size_t payload_bytes, std::size_t payload_offset,
                                       std::uint32_t pins) noexcept = 0;

 protected:
  LocalPublish() = default;
  ~LocalPublish() = default;
  LocalPublish(const LocalPublish&) = default;
  LocalPublish& operator=(const LocalPublish&) = default;
};

class RdmaWriter {
 public:
  /// `credits`: the CreditFifo capacity of each destination (rdma.credits).
  /// Allocates.
  RdmaWriter(std::shared_ptr<shm::ShmPublisherPort> local, const RdmaWriterFields& fields, std::uint32_t credits);
  /// Closes the destinations still open (their links must still exist:
  /// OutboundStreams removes a writer, or loses its links, before it lets go).
  ~RdmaWriter();
  RdmaWriter(const RdmaWriter&) = delete;
  RdmaWriter& operator=(const RdmaWriter&) = delete;

  /// Publishes locally and writes the message to every destination with a
  /// credit; the status adds one delivered per host written, one dropped per
  /// host without credit (and timed_out for a wait that ran out), evicted for
  /// a pending message replaced. The publisher's thread. No allocation; no
  /// system call but the link's post and, for kBlock, the wait. With
  /// `beside`, the local publish is beside's (which sends the message to the
  /// other hosts too), before any write is posted or waited for.
  PublishResult publish(LoanedChunk chunk, std::size_t payload_bytes, std::size_t payload_offset,
                        LocalPublish* beside = nullptr) noexcept;

  // The streams side (OutboundStreams, under its mutex).

  /// Opens stream `stream_id` on `link` (sends OPEN with the writer's
  /// fields). An error when the writer has kMaxRdmaDestinations already or
  /// the OPEN could not be sent. Allocates.
  Result<void> add_destination(LinkPort& link, std::uint32_t stream_id);
  /// Ends the stream: CLOSE to the receiver when `send_close` (not when the
  /// receiver closed it), its credits forgotten, its pending message
  /// unpinned, a publisher waiting for it woken. Returns once no publish
  /// uses the destination. False when there is no such stream.
  bool remove_destination(LinkPort& link, std::uint32_t stream_id, bool send_close) noexcept;
  /// Every destination on `link` removed without CLOSE (the link is gone).
  void on_link_lost(LinkPort& link) noexcept;
  /// A GRANT of the stream: a pending message is written into the first
  /// grant that fits, the others become credits; a publisher waiting for
  /// credit is woken. Empty when accepted, else why the peer is broken (the
  /// caller fails the link). The entries are copied.
  [[nodiscard]] std::string_view on_grant(LinkPort& link, std::uint32_t stream_id, const GrantList& grants) noexcept;
  /// The receiver's answer to OPEN (its host's strictest subscriber QoS).
  /// False when there is no such stream.
  bool on_open_answer(LinkPort& link, std::uint32_t stream_id, const OpenFields& answer) noexcept;
  /// How many hosts this writer is to send to (discovery named them) that
  /// no stream reaches now, and until when a message waits for them (the
  /// latest of their naming times + kOpenAnswerWaitNs): publish() waits
  /// until no host is unreached or that time, then counts one drop per host
  /// still unreached. A publisher waiting is woken.
  void set_unreached_peers(std::uint32_t count, std::int64_t wait_until_ns) noexcept;

  [[nodiscard]] const RdmaWriterFields& fields() const noexcept { return fields_; }
  [[nodiscard]] RdmaWriterCounters counters() const noexcept;
  /// Credits held for the stream now (0: no such stream). Streams side or tests.
  [[nodiscard]] std::uint32_t credits_of(const LinkPort& link, std::uint32_t stream_id) const noexcept;

 private:
  struct Destination;
  struct Slot {
    std::atomic<Destination*> destination{nullptr};
    std::atomic<std::uint64_t> generation{0};
  };
  /// What publish() does for one destination (rdma_writer_destination.hpp).
  struct Plan;

  void enter() noexcept;
  void leave() noexcept;
  /// Streams side: waits until no publish section that may have seen a
  /// destination emptied before this call is still running.
  void wait_for_publisher() const noexcept;
  /// Streams side: empties slot `index` and destroys its destination.
  void retire(std::uint32_t index, bool send_close) noexcept;
  [[nodiscard]] std::int32_t find(const LinkPort& link, std::uint32_t stream_id) const noexcept;
  void wake_waiters() noexcept;

  // Publisher side (inside a section).
  void post(Destination& d, const GrantEntry& grant, const std::byte* local, std::uint32_t length, void* handle,
            PublishStatus& status) noexcept;
  void say_want(Destination& d) noexcept;
  /// A credit of `d` that fits `length` (its spare first), or false.
  static bool take(Destination& d, std::uint32_t length, GrantEntry& grant) noexcept;
  /// Whether plan `p`'s destination is still the one it planned for.
  [[nodiscard]] bool still_there(const Plan& p) const noexcept;
  void keep_pending(Destination& d, const std::byte* local, std::uint32_t length, void* handle,
                    PublishStatus& status) noexcept;
  /// Evicts a pending message older than the one about to be written.
  void evict_pending(Destination& d, PublishStatus& status) noexcept;
  /// When a kBlock wait for `d` that began at `since_ns` gives up.
  [[nodiscard]] static std::int64_t block_deadline(const Destination& d, std::int64_t since_ns) noexcept;
  /// A wait for the OPEN answer once the answer came without credit: drops
  /// the message or leaves it pending as the receiver's QoS says (true), or
  /// turns it into a wait up to the receiver's block timeout (false).
  bool replan_after_answer(Plan& p, const std::byte* local, std::uint32_t length, void* handle,
                           PublishStatus& status) noexcept;
  void wait_for_credit(Plan* plans, std::uint32_t count, const std::byte* local, std::uint32_t length, void* handle,
                       PublishStatus& status) noexcept;
  /// Before a message is planned: sleeps while a named host is unreached
  /// and its wait has not run out (set_unreached_peers()).
  void wait_for_streams() noexcept;
  /// Streams side: a pending message written into `grant` (held under the
  /// destination's pending flag). False when it could not be posted.
  bool post_pending(Destination& d, const GrantEntry& grant) noexcept;

  static void note(std::atomic<std::uint64_t>& counter, std::uint64_t n = 1) noexcept {
    counter.fetch_add(n, std::memory_order_relaxed);  // a statistic
  }

  std::shared_ptr<shm::ShmPublisherPort> local_;
  RdmaWriterFields fields_;
  std::uint32_t credits_;
  std::array<Slot, kMaxRdmaDestinations> slots_;
  /// Slots [0, limit) may hold a destination: raised (release, after the
  /// slot's pointer) by add_destination(), never lowered; publish() loads it
  /// with acquire and looks at those slots only.
  std::atomic<std::uint32_t> slot_limit_{0};
  /// Streams side only: who owns each slot's destination.
  std::array<std::unique_ptr<Destination>, kMaxRdmaDestinations> owned_;
  /// Odd while the publisher is in a section (see the header comment). The
  /// publisher is its only writer.
  std::atomic<std::uint64_t> epoch_{0};
  /// A publisher waiting for credit sleeps on it; the streams side bumps it
  /// after a GRANT and when a destination goes (futex::notify_if_waiting()).
  WakeWord credit_word_;
  struct Counters {
    std::atomic<std::uint64_t> messages_written{0};
    std::atomic<std::uint64_t> bytes_written{0};
    std::atomic<std::uint64_t> credit_drops{0};
    std::atomic<std::uint64_t> evicted{0};
    std::atomic<std::uint64_t> timed_out{0};
    std::atomic<std::uint64_t> wants_sent{0};
    std::atomic<std::uint64_t> send_failures{0};
    std::atomic<std::uint64_t> pending_dropped{0};
    std::atomic<std::uint64_t> no_stream_drops{0};
  } counters_;
  /// Hosts the writer is to send to that no destination reaches, and until
  /// when a message waits for them (set by OutboundStreams under its mutex,
  /// read by publish()). publish()'s first look is relaxed: a count seen
  /// late is one message counted one way rather than the other. A waiting
  /// publisher reads both seq_cst after futex::Waiter's seq_cst count, and
  /// set_unreached_peers() stores them before wake_waiters()'s full fence:
  /// a change the waiter did not see wakes it.
  std::atomic<std::uint32_t> unreached_peers_{0};
  std::atomic<std::int64_t> unreached_wait_until_ns_{0};
};

}  // namespace axon::rdma
