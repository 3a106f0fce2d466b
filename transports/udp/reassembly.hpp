// Bounded reassembly of fragmented UDP messages straight into their final
// buffer (a loaned shared-memory chunk in the transport). Design:
// docs/design/udp.md, "Reassembly".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "axon/result.hpp"
#include "transports/udp/completed_keys.hpp"
#include "transports/udp/message_key.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp {

/// Where a message is assembled: at least `total_bytes` writable bytes and a
/// token the provider uses to recognise it later (e.g. a chunk index).
struct Destination {
  std::span<std::byte> bytes;
  std::uint64_t token = 0;
};

/// Supplies destinations: the transport loans a chunk of the right size class.
/// Called only from the thread that drives the Reassembler, never concurrently.
class DestinationProvider {
 public:
  DestinationProvider() = default;
  DestinationProvider(const DestinationProvider&) = delete;
  DestinationProvider& operator=(const DestinationProvider&) = delete;
  DestinationProvider(DestinationProvider&&) = delete;
  DestinationProvider& operator=(DestinationProvider&&) = delete;
  virtual ~DestinationProvider() = default;

  /// A buffer of at least `total_bytes` for a new message, or nullopt when
  /// none is available (the fragment is dropped and counted). Must not block.
  virtual std::optional<Destination> acquire(const MessageKey& key, std::uint64_t topic_id,
                                             std::uint32_t total_bytes) noexcept = 0;
  /// Takes back the destination of a message that will not complete (timed
  /// out, evicted, its sender dropped, the reassembler destroyed).
  virtual void release(const MessageKey& key, const Destination& destination) noexcept = 0;
};

/// What the reassembler does when a new message finds no free slot (or its
/// sender already has max_messages_per_sender in flight).
enum class WhenFull : std::uint8_t {
  kEvictOldest,  ///< Drop the least recently updated message (its sender's own when at its limit).
  kRefuseNew,    ///< Drop the new fragment.
};

struct ReassemblyConfig {
  std::uint32_t max_message_bytes = 16U * 1024U * 1024U;
  /// Bitmap bits per slot: 16 MiB in fragments of 1 KiB or more.
  std::uint32_t max_fragments_per_message = 16U * 1024U;
  std::uint32_t max_messages_in_flight = 16;  ///< Slots, over all senders.
  std::uint32_t max_messages_per_sender = 4;  ///< Slots one sender may hold.
  std::uint32_t completed_history = 256;      ///< Recently completed keys kept to spot late duplicates.
  std::uint64_t timeout_ns = 250'000'000;     ///< An incomplete message idle this long is dropped.
  WhenFull when_full = WhenFull::kEvictOldest;
};

/// Counters, one per way a fragment or message ends.
struct ReassemblyCounters {
  std::uint64_t fragments_stored = 0;         ///< Placed in a destination (fragments_in_place + fragments_copied).
  std::uint64_t fragments_in_place = 0;       ///< Already at their place (received there): nothing copied.
  std::uint64_t fragments_copied = 0;         ///< Copied from where they were received to their place.
  std::uint64_t messages_completed = 0;       ///< Handed to the caller.
  std::uint64_t duplicates = 0;               ///< Fragment already received (message in flight).
  std::uint64_t late_fragments = 0;           ///< Fragment of a message already completed.
  std::uint64_t conflicts = 0;                ///< Size, count or topic differs from the message's first fragment.
  std::uint64_t too_large = 0;                ///< total_bytes above max_message_bytes.
  std::uint64_t too_many_fragments = 0;       ///< fragment_count above max_fragments_per_message.
  std::uint64_t malformed = 0;                ///< Fields inconsistent (only if the caller skipped parse_datagram).
  std::uint64_t refused_no_slot = 0;          ///< kRefuseNew and no slot.
  std::uint64_t refused_no_destination = 0;   ///< The provider had no buffer.
  std::uint64_t messages_evicted = 0;         ///< Incomplete messages dropped for a newer one.
  std::uint64_t messages_timed_out = 0;       ///< Incomplete messages dropped after timeout_ns idle.
  std::uint64_t messages_dropped_sender = 0;  ///< Incomplete messages dropped by drop_sender().
};

enum class FeedOutcome : std::uint8_t {
  kStored,     ///< Copied; the message needs more fragments.
  kCompleted,  ///< This fragment completed the message: see FeedResult::message.
  kDuplicate,
  kLate,
  kConflict,
  kTooLarge,
  kTooManyFragments,
  kMalformed,
  kNoSlot,
  kNoDestination,
};

/// A complete message. Its destination now belongs to the caller (the
/// reassembler will not release it).
struct CompletedMessage {
  MessageKey key;
  std::uint64_t topic_id = 0;
  std::uint32_t total_bytes = 0;
  Destination destination;
};

struct FeedResult {
  FeedOutcome outcome = FeedOutcome::kStored;
  CompletedMessage message;  ///< Valid when outcome == kCompleted.
};

/// Fragments [first, end) of a message.
struct FragmentRange {
  std::uint32_t first = 0;
  std::uint32_t end = 0;
};

/// A fragment not received yet, as predicted by predict_next(): a receiver
/// points its socket read straight at `destination`.
struct PredictedFragment {
  MessageKey key;
  std::uint64_t topic_id = 0;
  std::uint32_t total_bytes = 0;
  std::uint32_t fragment_count = 0;
  std::uint32_t fragment_bytes = 0;
  std::uint32_t index = 0;
  std::span<std::byte> destination;  ///< Exactly this fragment's bytes of the message's destination.
  std::uint64_t claim = 0;           ///< Which hold of a destination this is (see prediction_holds()).
};

/// An incomplete message, as listed by in_flight().
struct InFlightMessage {
  MessageKey key;
  std::uint64_t topic_id = 0;
  std::uint32_t received_fragments = 0;
  std::uint32_t fragment_count = 0;
  std::uint64_t last_update_ns = 0;
};

/// Reassembles fragments into destinations from a DestinationProvider: at most
/// one copy per fragment, from the datagram to its final offset, and none when
/// the fragment was received at that offset already (predict_next()).
///
/// Memory: every slot, bitmap and history entry is allocated by create();
/// nothing allocates afterwards, whatever the network sends.
///
/// Thread safety: none. A receiver thread owns a Reassembler and is the only
/// one to call it (no atomics, no memory ordering to speak of); the provider
/// is called on that thread. Time is passed in (`now_ns`, any monotonic
/// clock) so tests control it.
class Reassembler {
 public:
  /// Checks `config` (all limits > 0, per sender <= in flight) and allocates
  /// everything. `provider` must outlive the reassembler.
  static Result<Reassembler> create(const ReassemblyConfig& config, DestinationProvider& provider);

  Reassembler(Reassembler&& other) noexcept;
  Reassembler& operator=(Reassembler&&) = delete;
  Reassembler(const Reassembler&) = delete;
  Reassembler& operator=(const Reassembler&) = delete;
  /// Releases the destinations of messages still in flight.
  ~Reassembler();

  /// Takes one fragment from `sender_id` (a datagram parse_datagram() accepted).
  /// Does not allocate; copies the fragment's payload at most once, and not
  /// at all when it already lies at its place (payload.data() is the
  /// destination + index * fragment_bytes: received there, see predict_next()).
  [[nodiscard]] FeedResult on_fragment(std::uint64_t sender_id, const DataFragment& fragment,
                                       std::uint64_t now_ns) noexcept;

  /// Drops messages idle for timeout_ns or more; returns how many.
  std::size_t expire(std::uint64_t now_ns) noexcept;

  /// The earliest time at which expire() would drop something, or nullopt.
  [[nodiscard]] std::optional<std::uint64_t> next_deadline_ns() const noexcept;

  /// Drops every message of `sender_id` (e.g. the host was lost); returns how many.
  std::size_t drop_sender(std::uint64_t sender_id) noexcept;

  /// Writes the missing fragments of message `key` as ranges, up to
  /// out.size(); returns how many were written (0 when `key` is not in flight
  /// or nothing is missing).
  [[nodiscard]] std::size_t missing_fragments(const MessageKey& key, std::span<FragmentRange> out) const noexcept;

  /// Predicts where the next datagrams go, so that a receiver can read them
  /// straight into place: the fragments, not received yet, that follow the
  /// last fragment received of the most recently updated message in flight,
  /// in index order, up to out.size(). Returns how many were written (0 when
  /// no message is in flight or nothing follows its last fragment). Never
  /// names a fragment already received, so reading into a prediction can only
  /// overwrite bytes that are not part of the message yet. Does not allocate.
  [[nodiscard]] std::size_t predict_next(std::span<PredictedFragment> out) const noexcept;

  /// Whether `predicted` (from predict_next()) still names a fragment not
  /// received yet of a message that has kept the same destination since:
  /// not completed, evicted, expired, dropped or started over. When false the
  /// destination may be back with the provider: do not read it.
  [[nodiscard]] bool prediction_holds(const PredictedFragment& predicted) const noexcept;

  /// Lists incomplete messages, up to out.size(); returns how many were written.
  [[nodiscard]] std::size_t in_flight(std::span<InFlightMessage> out) const noexcept;
  [[nodiscard]] std::size_t in_flight_count() const noexcept { return used_slots_; }

  [[nodiscard]] const ReassemblyCounters& counters() const noexcept { return counters_; }
  [[nodiscard]] const ReassemblyConfig& config() const noexcept { return config_; }

 private:
  struct Slot {
    bool used = false;
    MessageKey key;
    std::uint64_t topic_id = 0;
    std::uint32_t total_bytes = 0;
    std::uint32_t fragment_count = 0;
    std::uint32_t fragment_bytes = 0;
    std::uint32_t received = 0;
    std::uint32_t last_index = 0;  ///< The fragment received last.
    std::uint64_t last_update_ns = 0;
    std::uint64_t update = 0;  ///< Order of the last fragment stored, over all slots (newest: highest).
    std::uint64_t claim = 0;   ///< Unique per message that took the slot (PredictedFragment::claim).
    Destination destination;
    std::uint64_t* bitmap = nullptr;  ///< ceil(max_fragments_per_message / 64) words in bitmap_words_.
  };

  Reassembler(const ReassemblyConfig& config, DestinationProvider& provider);

  FeedResult store(Slot& slot, const DataFragment& fragment, std::uint64_t now_ns) noexcept;
  /// Puts `payload` at `to`, unless it is there already; counts which.
  void place(std::byte* to, std::span<const std::byte> payload) noexcept;
  [[nodiscard]] const Slot* find(const MessageKey& key) const noexcept;
  std::optional<Destination> acquire(const MessageKey& key, const DataFragment& fragment) noexcept;
  Slot* claim_slot(std::uint64_t sender_id, std::uint64_t now_ns) noexcept;
  void free_slot(Slot& slot, bool release_destination) noexcept;

  ReassemblyConfig config_;
  WireLimits limits_;
  DestinationProvider* provider_;
  std::vector<Slot> slots_;
  std::vector<std::uint64_t> bitmap_words_;
  CompletedKeys completed_;  ///< Spots late fragments of messages already delivered.
  std::size_t words_per_slot_ = 0;
  std::size_t used_slots_ = 0;
  std::size_t last_hit_ = 0;   ///< Slot of the previous fragment: consecutive fragments skip the scan.
  std::uint64_t updates_ = 0;  ///< Fragments stored into slots so far (Slot::update).
  std::uint64_t claims_ = 0;   ///< Messages that took a slot so far (Slot::claim).
  ReassemblyCounters counters_;
};

}  // namespace axon::udp
