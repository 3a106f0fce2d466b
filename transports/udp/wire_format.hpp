// The on-wire format of axon's UDP datagrams: explicit little-endian encoding
// and a parser that checks every field before anything else reads it.
// Layout and rules: docs/design/udp.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "axon/result.hpp"

namespace axon::udp {

/// "AXNU" as bytes on the wire (read as a little-endian u32).
inline constexpr std::uint32_t kMagic = 0x554E5841U;
/// 2: ACK (type 6) and ANNOUNCE's publisher entries (kEntryPublishers). 3:
/// ANNOUNCE's RDMA reachability (RdmaReachability). A datagram of another
/// version is refused as kIncompatible, never half read.
inline constexpr std::uint8_t kWireVersion = 3;

/// Bytes of the header every datagram starts with.
inline constexpr std::size_t kCommonHeaderBytes = 24;
/// Full header sizes per type (common header included).
inline constexpr std::size_t kDataHeaderBytes = 64;
inline constexpr std::size_t kHeartbeatBytes = 56;
inline constexpr std::size_t kNackHeaderBytes = 48;
inline constexpr std::size_t kNackRangeBytes = 16;
inline constexpr std::size_t kGapBytes = 56;
inline constexpr std::size_t kAckBytes = 56;
inline constexpr std::size_t kAnnounceHeaderBytes = 80;
inline constexpr std::size_t kAnnounceEntryBytes = 32;
/// Subscriptions one ANNOUNCE datagram carries (fits a 1500-byte MTU).
inline constexpr std::size_t kMaxAnnounceEntries = 40;
/// Pages of one participant's announcement (kMaxAnnounceEntries each).
inline constexpr std::size_t kMaxAnnouncePages = 64;
/// Bytes of a host name in an ANNOUNCE (NUL padded, at most 31 characters).
inline constexpr std::size_t kAnnounceHostBytes = 32;

/// Largest UDP payload over IPv4 (65535 - 20 IP - 8 UDP).
inline constexpr std::size_t kMaxDatagramBytes = 65507;
/// Fragment payload over a 1500-byte MTU: 1500 - 20 (IPv4) - 8 (UDP) - header.
inline constexpr std::size_t kMtu1500FragmentBytes = 1500 - 20 - 8 - kDataHeaderBytes;  // 1408
/// A NACK names at most this many fragment ranges (fits a 1500-byte MTU).
inline constexpr std::size_t kMaxNackRanges = 64;
/// `NackRange::end_fragment` meaning "up to the last fragment".
inline constexpr std::uint32_t kAllFragments = 0xFFFFFFFFU;

enum class DatagramType : std::uint8_t {
  kData = 1,       ///< One fragment of a message.
  kHeartbeat = 2,  ///< A writer's range of sequences (liveliness, lets readers NACK).
  kNack = 3,       ///< A reader asks a writer to resend fragments.
  kGap = 4,        ///< A writer says sequences are gone for good.
  kAnnounce = 5,   ///< A participant: where it receives, which topics it subscribes (discovery, liveliness).
  kAck = 6,        ///< A reader tells a writer which messages it has (the writer may let them go).
};

/// Flag bits of the common header. Unknown bits are refused.
inline constexpr std::uint8_t kFlagChecksum = 0x01U;  ///< `checksum` holds a CRC-32C of the datagram.
/// DATA and HEARTBEAT: the writer keeps the message for resends (RELIABLE stream).
inline constexpr std::uint8_t kFlagReliable = 0x02U;
/// ANNOUNCE: relayed by the host's discovery port owner (never relayed again).
inline constexpr std::uint8_t kFlagRelayed = 0x04U;
inline constexpr std::uint8_t kKnownFlags = kFlagChecksum | kFlagReliable | kFlagRelayed;

/// Every reason the parser refuses a datagram (one counter each).
enum class ParseError : std::uint8_t {
  kOk = 0,
  kTruncatedHeader,          ///< Shorter than the common header.
  kDatagramTooLarge,         ///< Longer than kMaxDatagramBytes.
  kBadMagic,                 ///< Not an axon datagram.
  kUnsupportedVersion,       ///< Another wire version.
  kUnknownType,              ///< A type code this version does not know.
  kUnknownFlags,             ///< A flag bit this version does not know.
  kReservedNotZero,          ///< A reserved field is not zero.
  kZeroSenderId,             ///< Sender ids are never zero.
  kLengthMismatch,           ///< `datagram_bytes` differs from the received size.
  kTruncatedBody,            ///< Shorter than the header of its type.
  kChecksumMissing,          ///< The limits require a checksum and there is none.
  kBadChecksum,              ///< The CRC-32C does not match.
  kZeroSequence,             ///< Sequences start at 1.
  kPayloadLengthMismatch,    ///< `payload_bytes` differs from what follows the header.
  kZeroFragmentCount,        ///< A message has at least one fragment.
  kZeroFragmentSize,         ///< The nominal fragment size is zero.
  kFragmentSizeTooLarge,     ///< Above WireLimits::max_fragment_bytes.
  kFragmentIndexOutOfRange,  ///< index >= count.
  kFragmentCountMismatch,    ///< count != ceil(total / fragment size).
  kFragmentPayloadMismatch,  ///< A fragment's payload is not the size its index implies.
  kMessageTooLarge,          ///< Above WireLimits::max_message_bytes.
  kBadSequenceRange,         ///< Heartbeat first > last + 1, or gap first >= end.
  kTooManyNackRanges,        ///< More than kMaxNackRanges.
  kBadNackRange,             ///< first_fragment >= end_fragment.
  kBadAnnounce,              ///< ANNOUNCE with a bad page, entry count, host name, address, entry or RDMA flags.
  kCount,                    ///< Number of values, not an error.
};

inline constexpr std::size_t kParseErrorCount = static_cast<std::size_t>(ParseError::kCount);

/// A short description of `error` ("fragment index >= fragment count").
[[nodiscard]] std::string_view to_string(ParseError error) noexcept;

/// What the receiver accepts. Defaults: 16 MiB messages, fragments up to the
/// largest datagram, checksum optional.
struct WireLimits {
  std::uint32_t max_message_bytes = 16U * 1024U * 1024U;
  std::uint32_t max_fragment_bytes = kMaxDatagramBytes - kDataHeaderBytes;
  bool require_checksum = false;
};

/// Bytes of a datagram in one piece, or in two when a scatter receive put the
/// DATA header in one buffer and the payload straight into its place in a
/// chunk: `head`, then `tail`. A view: the bytes stay where they are.
struct SplitBytes {
  std::span<const std::byte> head;
  std::span<const std::byte> tail;

  [[nodiscard]] std::size_t size() const noexcept { return head.size() + tail.size(); }
  /// Bytes [offset, offset + count) (clamped to size()), in the same pieces.
  [[nodiscard]] SplitBytes subrange(std::size_t offset, std::size_t count = std::dynamic_extent) const noexcept;
};

/// The common header (bytes 0..23 of every datagram).
struct DatagramHeader {
  DatagramType type = DatagramType::kData;
  std::uint8_t flags = 0;
  std::uint64_t sender_id = 0;       ///< Random per participant incarnation, never 0.
  std::uint32_t checksum = 0;        ///< CRC-32C when kFlagChecksum is set, else 0.
  std::uint32_t datagram_bytes = 0;  ///< Whole datagram, header included.
};

/// A DATA datagram: fragment `fragment_index` of message `sequence`.
/// Fragment i covers bytes [i * fragment_bytes, min(total, (i+1) * fragment_bytes)).
struct DataFragment {
  std::uint64_t topic_id = 0;
  std::uint64_t sequence = 0;  ///< Per writer, from 1.
  std::uint32_t writer_id = 0;
  std::uint32_t total_bytes = 0;     ///< Size of the whole message.
  std::uint32_t fragment_index = 0;  ///< 0 .. fragment_count - 1.
  std::uint32_t fragment_count = 0;
  std::uint32_t fragment_bytes = 0;    ///< Nominal payload of every fragment but the last.
  std::span<const std::byte> payload;  ///< This fragment's bytes (points into the datagram).
};

/// A HEARTBEAT: the writer holds [first_sequence, last_sequence] for resends;
/// first = last + 1 when it holds nothing. writer_id 0 and topic_id 0: the
/// participant itself is alive.
struct Heartbeat {
  std::uint64_t topic_id = 0;
  std::uint64_t first_sequence = 0;
  std::uint64_t last_sequence = 0;
  std::uint32_t writer_id = 0;
};

/// Fragments [first_fragment, end_fragment) of message `sequence`.
struct NackRange {
  std::uint64_t sequence = 0;
  std::uint32_t first_fragment = 0;
  std::uint32_t end_fragment = kAllFragments;
};

/// A NACK from a reader to writer (`target_sender_id`, `writer_id`).
struct Nack {
  std::uint64_t target_sender_id = 0;
  std::uint64_t topic_id = 0;
  std::uint32_t writer_id = 0;
  std::uint32_t range_count = 0;
  SplitBytes encoded_ranges;  ///< range_count * kNackRangeBytes, checked.

  /// Range `i` (< range_count), decoded from the datagram.
  [[nodiscard]] NackRange range(std::size_t i) const noexcept;
};

/// A GAP: sequences [first_sequence, end_sequence) of the writer will never come.
struct Gap {
  std::uint64_t topic_id = 0;
  std::uint64_t first_sequence = 0;
  std::uint64_t end_sequence = 0;
  std::uint32_t writer_id = 0;
};

/// An ACK from a reader to writer (`target_sender_id`, `writer_id`) of a
/// RELIABLE stream: every message before `next_sequence` was delivered (or
/// skipped by a GAP), so the writer need not keep them for resends.
struct Ack {
  std::uint64_t target_sender_id = 0;
  std::uint64_t topic_id = 0;
  std::uint64_t next_sequence = 0;  ///< >= 1.
  std::uint32_t writer_id = 0;
};

/// One subscription of an ANNOUNCE (or, with kEntryPublishers, the
/// participant's publishers of a topic: for graph events only).
struct AnnounceEntry {
  std::uint64_t topic_id = 0;        ///< Hash of the topic name (DATA's topic_id).
  std::uint64_t type_hash = 0;       ///< TypeIdentity::hash.
  std::uint64_t type_name_hash = 0;  ///< Hash of TypeIdentity::name (compatible evolution).
  std::uint32_t flags = 0;           ///< kEntryReliable | kEntryReceiver | kEntryEvolution | kEntryPublishers.
  std::uint32_t subscribers = 0;     ///< Subscriptions (kEntryPublishers: publishers) of the participant on the topic.
};
inline constexpr std::uint32_t kEntryReliable = 0x1U;   ///< At least one subscription is RELIABLE.
inline constexpr std::uint32_t kEntryReceiver = 0x2U;   ///< This participant receives the topic for its host.
inline constexpr std::uint32_t kEntryEvolution = 0x4U;  ///< Accepts another schema of the same type name.
/// The entry counts publishers, not subscriptions: never a route (RemoteHosts skips it when matching).
inline constexpr std::uint32_t kEntryPublishers = 0x8U;
inline constexpr std::uint32_t kKnownEntryFlags = kEntryReliable | kEntryReceiver | kEntryEvolution | kEntryPublishers;

/// Whether a participant accepts RDMA connections, and on which rdma_cm port
/// (at its ANNOUNCE's `ipv4`). Default: not reachable.
struct RdmaReachability {
  std::uint16_t cm_port = 0;
  bool reachable = false;

  /// Reachable exactly when there is a port to connect to (what the parser accepts).
  [[nodiscard]] constexpr bool valid() const noexcept { return reachable == (cm_port != 0); }

  friend bool operator==(const RdmaReachability&, const RdmaReachability&) = default;
};
/// ANNOUNCE's RDMA flags byte: bit 0 "reachable by RDMA"; other bits are refused.
inline constexpr std::uint8_t kRdmaReachable = 0x01U;

/// An ANNOUNCE: participant `header.sender_id` of `domain_id` on `host`
/// receives at ipv4:port; page `page` of `page_count` of its subscriptions.
struct Announce {
  std::uint32_t domain_id = 0;
  std::uint32_t ipv4 = 0;  ///< Host order; not 0.
  std::uint16_t port = 0;  ///< Not 0.
  std::uint8_t page = 0;
  std::uint8_t page_count = 1;
  std::uint32_t period_ms = 0;                  ///< The sender's announcement period (liveliness), 1..60000.
  std::array<char, kAnnounceHostBytes> host{};  ///< NUL terminated, printable ASCII.
  std::uint32_t entry_count = 0;
  RdmaReachability rdma;       ///< The same on every page.
  SplitBytes encoded_entries;  ///< entry_count * kAnnounceEntryBytes, checked.

  [[nodiscard]] AnnounceEntry entry(std::size_t i) const noexcept;
  [[nodiscard]] std::string_view host_name() const noexcept;
};

/// A datagram the parser accepted: `header.type` says which body is set (the
/// others stay default). Spans point into the parsed bytes: keep those alive
/// while using it. (Plain members rather than a std::variant: nothing here can
/// throw, and the parser stays noexcept by construction.)
struct ParsedDatagram {
  DatagramHeader header;
  DataFragment data;    ///< header.type == kData.
  Heartbeat heartbeat;  ///< header.type == kHeartbeat.
  Nack nack;            ///< header.type == kNack.
  Gap gap;              ///< header.type == kGap.
  Announce announce;    ///< header.type == kAnnounce.
  Ack ack;              ///< header.type == kAck.
};

/// Checks every field of `bytes` and decodes it into `out`. Returns kOk or the
/// first rule the datagram breaks; `out` is unspecified then. Never reads
/// outside `bytes`, never allocates.
[[nodiscard]] ParseError parse_datagram(std::span<const std::byte> bytes, const WireLimits& limits,
                                        ParsedDatagram& out) noexcept;

/// parse_datagram() for a datagram a scatter receive left in two pieces:
/// `header` holds its first kDataHeaderBytes bytes (all of it when shorter,
/// `payload` then empty) and `payload` the rest, e.g. a DATA payload received
/// straight into its place in a chunk. The same checks in the same order, and
/// the same result, as parse_datagram() on the two pieces joined; the CRC-32C
/// runs over both pieces. For DATA, `out.data.payload` is `payload` itself (no
/// copy); the NACK and ANNOUNCE lists are views that may span both pieces.
[[nodiscard]] ParseError parse_split_datagram(std::span<const std::byte> header, std::span<const std::byte> payload,
                                              const WireLimits& limits, ParsedDatagram& out) noexcept;

/// The same as a Result: kMalformed (kIncompatible for another wire version)
/// with the reason as a static message (no allocation).
[[nodiscard]] Result<ParsedDatagram> parse_datagram(std::span<const std::byte> bytes,
                                                    const WireLimits& limits = {}) noexcept;

/// The DATA rules alone (sequence, sizes, index, count, payload size against
/// `fragment.payload`), for code that builds fragments itself.
[[nodiscard]] ParseError check_fragment(const DataFragment& fragment, const WireLimits& limits) noexcept;

/// Counts refused datagrams by reason. Single-threaded (the receiver's).
class ParseCounters {
 public:
  void count(ParseError error) noexcept { ++counts_[static_cast<std::size_t>(error)]; }
  [[nodiscard]] std::uint64_t of(ParseError error) const noexcept { return counts_[static_cast<std::size_t>(error)]; }
  /// Refused datagrams, all reasons (kOk excluded).
  [[nodiscard]] std::uint64_t refused() const noexcept;

 private:
  std::array<std::uint64_t, kParseErrorCount> counts_{};
};

/// Fragments of a `total_bytes` message cut into `fragment_bytes` pieces
/// (1 for an empty message). fragment_bytes must not be 0.
[[nodiscard]] constexpr std::uint64_t fragment_count_for(std::uint64_t total_bytes,
                                                         std::uint64_t fragment_bytes) noexcept {
  return total_bytes == 0 ? 1 : (total_bytes + fragment_bytes - 1) / fragment_bytes;
}

// ---- Encoding. Each function writes into `out` and returns the datagram's
// size, or 0 when `out` is too small or an argument breaks the rules the
// parser checks (so what is encoded always parses). Set `checksum` to add a
// CRC-32C. None allocates.

/// Writes only the DATA header (kDataHeaderBytes), for senders that gather the
/// payload from the loaned chunk with an iovec. `fragment.payload` gives the
/// payload (its size is written; with `checksum` its bytes are summed too).
[[nodiscard]] std::size_t encode_data_header(std::span<std::byte> out, std::uint64_t sender_id,
                                             const DataFragment& fragment, bool checksum = false,
                                             bool reliable = false) noexcept;
/// The DATA header followed by a copy of `fragment.payload`.
[[nodiscard]] std::size_t encode_data(std::span<std::byte> out, std::uint64_t sender_id, const DataFragment& fragment,
                                      bool checksum = false, bool reliable = false) noexcept;
[[nodiscard]] std::size_t encode_heartbeat(std::span<std::byte> out, std::uint64_t sender_id,
                                           const Heartbeat& heartbeat, bool checksum = false,
                                           bool reliable = false) noexcept;
/// `ranges.size()` must be 1..kMaxNackRanges.
[[nodiscard]] std::size_t encode_nack(std::span<std::byte> out, std::uint64_t sender_id, std::uint64_t target_sender_id,
                                      std::uint64_t topic_id, std::uint32_t writer_id,
                                      std::span<const NackRange> ranges, bool checksum = false) noexcept;
[[nodiscard]] std::size_t encode_gap(std::span<std::byte> out, std::uint64_t sender_id, const Gap& gap,
                                     bool checksum = false) noexcept;
[[nodiscard]] std::size_t encode_ack(std::span<std::byte> out, std::uint64_t sender_id, const Ack& ack,
                                     bool checksum = false) noexcept;

/// `announce.encoded_entries` is ignored: `entries` (at most
/// kMaxAnnounceEntries) are encoded. `flags` may add kFlagRelayed.
[[nodiscard]] std::size_t encode_announce(std::span<std::byte> out, std::uint64_t sender_id, const Announce& announce,
                                          std::span<const AnnounceEntry> entries, std::uint8_t flags = 0,
                                          bool checksum = false) noexcept;

/// Sets kFlagRelayed in an encoded ANNOUNCE (and seals it again when it has a checksum).
void set_relayed_flag(std::span<std::byte> datagram) noexcept;

/// The fields of fragment `index` of a message (payload: its slice of `message`).
[[nodiscard]] DataFragment make_fragment(std::uint64_t topic_id, std::uint32_t writer_id, std::uint64_t sequence,
                                         std::span<const std::byte> message, std::uint32_t fragment_bytes,
                                         std::uint32_t index) noexcept;

}  // namespace axon::udp
