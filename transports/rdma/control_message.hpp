// The control messages of the RDMA transport (docs/design/rdma-transport.md,
// "Streams and credits", "Control messages"): two-sided SENDs on the queue
// pair, each in one fixed-size slot of a registered ring of receive buffers.
//
//   OPEN   a stream (one publisher to one receiving participant): topic, type,
//          writer, largest message, and the receiving host's strictest
//          subscriber QoS (what the sender does without credit);
//   CLOSE  a stream;
//   GRANT  chunks of the receiver's pool the sender may write into (batched);
//   WANT   the sender has messages waiting for credit (0: no longer).
//
// Layout, little-endian, every offset from the start of the message:
//
//   Header (kControlHeaderBytes = 16), every kind:
//     0  u32  magic "AXRC" (kControlMagic)
//     4  u8   version (kControlVersion)
//     5  u8   kind (ControlKind)
//     6  u16  reserved, 0
//     8  u32  message bytes, header included (== the SEND's byte_len)
//    12  u32  stream id (nonzero; chosen by the stream's sender)
//   CLOSE: the header alone (16 bytes).
//   OPEN (kOpenBytes = 56):
//    16  u64  topic id              24  u64  type hash
//    32  u32  writer id             36  u32  largest message bytes
//    40  u64  block timeout ns (at most INT64_MAX)
//    48  u8   reliability (0 best effort, 1 reliable)
//    49  u8   overflow (0 default, 1 drop oldest, 2 reject newest, 3 latest only, 4 block publisher)
//    50  u16  reserved, 0           52  u32  reserved, 0
//   WANT (kWantBytes = 24):
//    16  u32  messages waiting (0: none any more)    20  u32  reserved, 0
//   GRANT (kGrantHeaderBytes = 24, then grant_count entries of kGrantEntryBytes = 24):
//    16  u32  grant count (1..kMaxGrantsPerMessage)  20  u32  reserved, 0
//    entry: 0 u64 chunk payload address, 8 u32 capacity bytes, 12 u32 grant slot,
//           16 u8 size class, 17 u8 reserved 0, 18 u16 reserved 0, 20 u32 reserved 0
//
// A message fills at most one slot of kControlSlotBytes (4096): a GRANT
// carries at most kMaxGrantsPerMessage (169) grants.
//
// Thread safety: pure functions. No allocation, no system call (the RDMA
// thread parses every control message it receives). The parser reads bytes
// another host sent: every field is checked before it becomes an index, a
// size or an address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace axon::rdma {

/// "AXRC" as bytes on the wire (read as a little-endian u32).
inline constexpr std::uint32_t kControlMagic = 0x43525841U;
inline constexpr std::uint8_t kControlVersion = 1;

/// Bytes of one receive buffer of the control ring: the largest message.
inline constexpr std::size_t kControlSlotBytes = 4096;
inline constexpr std::size_t kControlHeaderBytes = 16;
inline constexpr std::size_t kCloseBytes = kControlHeaderBytes;
inline constexpr std::size_t kOpenBytes = 56;
inline constexpr std::size_t kWantBytes = 24;
inline constexpr std::size_t kGrantHeaderBytes = 24;
inline constexpr std::size_t kGrantEntryBytes = 24;
inline constexpr std::size_t kMaxGrantsPerMessage = (kControlSlotBytes - kGrantHeaderBytes) / kGrantEntryBytes;
static_assert(kMaxGrantsPerMessage == 169);

/// Field offsets (the table above); the tests pin them.
namespace control_layout {
namespace header {
inline constexpr std::size_t kMagic = 0;
inline constexpr std::size_t kVersion = 4;
inline constexpr std::size_t kKind = 5;
inline constexpr std::size_t kReserved = 6;
inline constexpr std::size_t kMessageBytes = 8;
inline constexpr std::size_t kStreamId = 12;
static_assert(kStreamId + 4 == kControlHeaderBytes);
}  // namespace header
namespace open {
inline constexpr std::size_t kTopicId = 16;
inline constexpr std::size_t kTypeHash = 24;
inline constexpr std::size_t kWriterId = 32;
inline constexpr std::size_t kLargestMessageBytes = 36;
inline constexpr std::size_t kBlockTimeoutNs = 40;
inline constexpr std::size_t kReliability = 48;
inline constexpr std::size_t kOverflow = 49;
inline constexpr std::size_t kReserved16 = 50;
inline constexpr std::size_t kReserved32 = 52;
static_assert(kReserved32 + 4 == kOpenBytes);
}  // namespace open
namespace want {
inline constexpr std::size_t kMessagesWaiting = 16;
inline constexpr std::size_t kReserved = 20;
static_assert(kReserved + 4 == kWantBytes);
}  // namespace want
namespace grant {
inline constexpr std::size_t kGrantCount = 16;
inline constexpr std::size_t kReserved = 20;
inline constexpr std::size_t kEntries = 24;
static_assert(kEntries == kGrantHeaderBytes);
// Inside one entry.
inline constexpr std::size_t kAddress = 0;
inline constexpr std::size_t kCapacityBytes = 8;
inline constexpr std::size_t kSlot = 12;
inline constexpr std::size_t kSizeClass = 16;
inline constexpr std::size_t kReserved8 = 17;
inline constexpr std::size_t kReserved16 = 18;
inline constexpr std::size_t kReserved32 = 20;
static_assert(kReserved32 + 4 == kGrantEntryBytes);
}  // namespace grant
}  // namespace control_layout
static_assert(kGrantHeaderBytes + kMaxGrantsPerMessage * kGrantEntryBytes <= kControlSlotBytes);

enum class ControlKind : std::uint8_t {
  kOpen = 1,
  kClose = 2,
  kGrant = 3,
  kWant = 4,
};

/// What the sender does for this host without credit (design, "QoS without
/// credit"): the strictest of the host's subscribers of the topic. Wire
/// values are these numbers; they follow axon::Reliability and axon::Overflow.
enum class WireReliability : std::uint8_t { kBestEffort = 0, kReliable = 1 };
enum class WireOverflow : std::uint8_t {
  kDefault = 0,
  kDropOldest = 1,
  kRejectNewest = 2,
  kLatestOnly = 3,
  kBlockPublisher = 4,
};

struct OpenFields {
  std::uint64_t topic_id = 0;
  std::uint64_t type_hash = 0;
  std::uint32_t writer_id = 0;
  std::uint32_t largest_message_bytes = 0;
  WireReliability reliability = WireReliability::kBestEffort;
  WireOverflow overflow = WireOverflow::kDefault;
  std::uint64_t block_timeout_ns = 0;
  friend bool operator==(const OpenFields&, const OpenFields&) = default;
};

/// One chunk of the receiver's pool the sender may write one message into:
/// the immediate of that write is [size_class][slot][length]. capacity_bytes
/// is the class's payload capacity, from which both sides derive the
/// immediate's length bits (immediate.hpp).
struct GrantEntry {
  std::uint64_t address = 0;  ///< The chunk's payload, in the receiver's registered region.
  std::uint32_t capacity_bytes = 0;
  std::uint32_t slot = 0;
  std::uint8_t size_class = 0;
  friend bool operator==(const GrantEntry&, const GrantEntry&) = default;
};

/// The receiver's registered region (its connection private data): every
/// grant must lie inside it.
struct PeerRegion {
  std::uint64_t base = 0;
  std::uint64_t length = 0;
};

/// A parsed GRANT: the entries stay in the receive buffer, checked.
struct GrantList {
  std::uint32_t count = 0;
  std::span<const std::byte> encoded_entries;
  [[nodiscard]] GrantEntry entry(std::size_t i) const noexcept;
};

/// What parse_control() accepted. Only the member of `kind` is filled.
struct ControlMessage {
  ControlKind kind = ControlKind::kClose;
  std::uint32_t stream_id = 0;
  OpenFields open;
  GrantList grant;
  std::uint32_t messages_waiting = 0;  ///< WANT
};

/// Every reason the parser refuses a control message, each naming the field
/// (one counter each; the participant tears the queue pair down).
enum class ControlError : std::uint8_t {
  kOk = 0,
  kTruncatedHeader,     ///< Fewer bytes than the 16-byte header.
  kLongerThanSlot,      ///< More bytes than a control slot (4096).
  kBadMagic,            ///< Not "AXRC".
  kUnsupportedVersion,  ///< Another control version.
  kUnknownKind,         ///< A kind this version does not know.
  kReservedNotZero,     ///< A reserved field is not zero.
  kLengthPastBuffer,    ///< message bytes above the bytes received.
  kLengthBelowBuffer,   ///< message bytes below the bytes received.
  kWrongSizeForKind,    ///< message bytes not the size of its kind (or grant count).
  kZeroStreamId,        ///< Stream ids are never zero.
  kBadReliability,      ///< OPEN reliability not 0 or 1.
  kBadOverflow,         ///< OPEN overflow not 0..4.
  kBadBlockTimeout,     ///< OPEN block timeout above INT64_MAX.
  kZeroGrants,          ///< GRANT without a grant.
  kTooManyGrants,       ///< GRANT count above kMaxGrantsPerMessage.
  kBadSizeClass,        ///< A grant's size class is 16 or more.
  kZeroCapacity,        ///< A grant's capacity is 0.
  kCapacityTooLarge,    ///< A grant's capacity leaves no slot bit (256 MiB or more).
  kSlotOutOfRange,      ///< A grant's slot does not fit its capacity's slot bits.
  kAddressOverflow,     ///< A grant's address + capacity passes 2^64.
  kOutsideRegion,       ///< A grant's chunk is not inside the receiver's region.
  kCount,
};

/// "rdma control: GRANT entry capacity is 0", ... (static text).
[[nodiscard]] std::string_view to_string(ControlError error) noexcept;

/// Checks `bytes` (one received control message, exactly its byte_len) and
/// fills `out` when it is valid. `out.grant` points into `bytes`.
[[nodiscard]] ControlError parse_control(std::span<const std::byte> bytes, const PeerRegion& region,
                                         ControlMessage& out) noexcept;

// Encoders into the caller's buffer (a control slot): the bytes written, or
// 0 when the message does not fit `out` or a field breaks a rule the parser
// applies (stream id 0, bad enum, no grants, too many, a bad grant).
[[nodiscard]] std::size_t encode_open(std::span<std::byte> out, std::uint32_t stream_id,
                                      const OpenFields& open) noexcept;
[[nodiscard]] std::size_t encode_close(std::span<std::byte> out, std::uint32_t stream_id) noexcept;
[[nodiscard]] std::size_t encode_want(std::span<std::byte> out, std::uint32_t stream_id,
                                      std::uint32_t messages_waiting) noexcept;
/// The grants are checked as the parser checks them, against `region` (the
/// sender's own registered region).
[[nodiscard]] std::size_t encode_grant(std::span<std::byte> out, std::uint32_t stream_id,
                                       std::span<const GrantEntry> grants, const PeerRegion& region) noexcept;

}  // namespace axon::rdma
