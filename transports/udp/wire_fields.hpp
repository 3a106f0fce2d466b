// The datagram layout of the wire format (wire_format.hpp): field offsets, little-endian loads and
// stores, the checksum and the rules the parser (wire_parse.cpp) and the encoder (wire_encode.cpp) share.
// Private to those two files.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "transports/udp/crc32c.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp::wire_fields {

// Field offsets (docs/design/udp.md has the tables).
namespace common {
constexpr std::size_t kMagic = 0;
constexpr std::size_t kVersion = 4;
constexpr std::size_t kType = 5;
constexpr std::size_t kFlags = 6;
constexpr std::size_t kReserved = 7;
constexpr std::size_t kSenderId = 8;
constexpr std::size_t kChecksum = 16;
constexpr std::size_t kDatagramBytes = 20;
}  // namespace common
namespace data {
constexpr std::size_t kTopicId = 24;
constexpr std::size_t kSequence = 32;
constexpr std::size_t kWriterId = 40;
constexpr std::size_t kTotalBytes = 44;
constexpr std::size_t kFragmentIndex = 48;
constexpr std::size_t kFragmentCount = 52;
constexpr std::size_t kFragmentBytes = 56;
constexpr std::size_t kPayloadBytes = 60;
static_assert(kPayloadBytes + 4 == kDataHeaderBytes);
}  // namespace data
namespace heartbeat {  // GAP has the same layout with end_sequence in place of last_sequence.
constexpr std::size_t kTopicId = 24;
constexpr std::size_t kFirstSequence = 32;
constexpr std::size_t kLastSequence = 40;
constexpr std::size_t kWriterId = 48;
constexpr std::size_t kReserved = 52;
static_assert(kReserved + 4 == kHeartbeatBytes && kHeartbeatBytes == kGapBytes);
}  // namespace heartbeat
// ACK and NACK open alike: after the common header, the sender and the topic they answer.
namespace addressed {
constexpr std::size_t kTargetSenderId = 24;
constexpr std::size_t kTopicId = 32;
}  // namespace addressed
namespace ack {
using addressed::kTargetSenderId;
using addressed::kTopicId;
constexpr std::size_t kNextSequence = 40;
constexpr std::size_t kWriterId = 48;
constexpr std::size_t kReserved = 52;
static_assert(kReserved + 4 == kAckBytes);
}  // namespace ack
namespace nack {
using addressed::kTargetSenderId;
using addressed::kTopicId;
constexpr std::size_t kWriterId = 40;
constexpr std::size_t kRangeCount = 44;
constexpr std::size_t kRanges = 48;
static_assert(kRanges == kNackHeaderBytes);
// Inside one range.
constexpr std::size_t kRangeSequence = 0;
constexpr std::size_t kRangeFirst = 8;
constexpr std::size_t kRangeEnd = 12;
}  // namespace nack
static_assert(kNackHeaderBytes + kMaxNackRanges * kNackRangeBytes <= kMtu1500FragmentBytes + kDataHeaderBytes);
namespace announce {
constexpr std::size_t kDomainId = 24;
constexpr std::size_t kIpv4 = 28;
constexpr std::size_t kPort = 32;  // u16
constexpr std::size_t kPage = 34;
constexpr std::size_t kPageCount = 35;
constexpr std::size_t kPeriodMs = 36;
constexpr std::size_t kHost = 40;
constexpr std::size_t kEntryCount = 72;
constexpr std::size_t kRdmaCmPort = 76;  // u16, wire version 3
constexpr std::size_t kRdmaFlags = 78;   // kRdmaReachable
constexpr std::size_t kReserved = 79;    // u8
static_assert(kHost + kAnnounceHostBytes == kEntryCount && kReserved + 1 == kAnnounceHeaderBytes);
// Inside one entry.
constexpr std::size_t kTopicId = 0;
constexpr std::size_t kTypeHash = 8;
constexpr std::size_t kTypeNameHash = 16;
constexpr std::size_t kFlags = 24;
constexpr std::size_t kSubscribers = 28;
static_assert(kSubscribers + 4 == kAnnounceEntryBytes);
}  // namespace announce
static_assert(kAnnounceHeaderBytes + kMaxAnnounceEntries * kAnnounceEntryBytes <=
              kMtu1500FragmentBytes + kDataHeaderBytes);

// Little-endian loads and stores, byte by byte: no alignment or host-order assumptions.
inline std::uint8_t load_u8(std::span<const std::byte> b, std::size_t at) noexcept {
  return std::to_integer<std::uint8_t>(b[at]);
}
inline std::uint32_t load_u32(std::span<const std::byte> b, std::size_t at) noexcept {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    v |= static_cast<std::uint32_t>(std::to_integer<std::uint8_t>(b[at + i])) << (8 * i);
  }
  return v;
}
// The same over a datagram in two pieces: a field may straddle them.
inline std::uint8_t load_u8(const SplitBytes& b, std::size_t at) noexcept {
  return at < b.head.size() ? load_u8(b.head, at) : load_u8(b.tail, at - b.head.size());
}
inline std::uint32_t load_u32(const SplitBytes& b, std::size_t at) noexcept {
  if (at + 4 <= b.head.size()) {
    return load_u32(b.head, at);
  }
  if (at >= b.head.size()) {
    return load_u32(b.tail, at - b.head.size());
  }
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    v |= static_cast<std::uint32_t>(load_u8(b, at + i)) << (8 * i);
  }
  return v;
}
inline std::uint64_t load_u64(const SplitBytes& b, std::size_t at) noexcept {
  return static_cast<std::uint64_t>(load_u32(b, at)) | (static_cast<std::uint64_t>(load_u32(b, at + 4)) << 32);
}
inline void store_u8(std::span<std::byte> b, std::size_t at, std::uint8_t v) noexcept { b[at] = std::byte{v}; }
inline void store_u32(std::span<std::byte> b, std::size_t at, std::uint32_t v) noexcept {
  for (std::size_t i = 0; i < 4; ++i) {
    b[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xFFU);
  }
}
inline void store_u64(std::span<std::byte> b, std::size_t at, std::uint64_t v) noexcept {
  store_u32(b, at, static_cast<std::uint32_t>(v));
  store_u32(b, at + 4, static_cast<std::uint32_t>(v >> 32));
}

inline constexpr std::array<std::byte, 4> kZeroChecksum{};

inline std::uint32_t crc32c_of(const SplitBytes& bytes, std::uint32_t crc) noexcept {
  return crc32c(bytes.tail, crc32c(bytes.head, crc));
}

// CRC-32C of a whole datagram with the checksum field read as zero.
inline std::uint32_t datagram_checksum(const SplitBytes& datagram) noexcept {
  std::uint32_t crc = crc32c_of(datagram.subrange(0, common::kChecksum), 0);
  crc = crc32c(kZeroChecksum, crc);
  return crc32c_of(datagram.subrange(common::kChecksum + 4), crc);
}

// The rules of a DATA fragment shared by the parser and the encoder.
inline ParseError check_data(const DataFragment& f, std::size_t payload_size, const WireLimits& limits) noexcept {
  if (f.sequence == 0) {
    return ParseError::kZeroSequence;
  }
  if (f.total_bytes > limits.max_message_bytes) {
    return ParseError::kMessageTooLarge;
  }
  if (f.fragment_count == 0) {
    return ParseError::kZeroFragmentCount;
  }
  if (f.fragment_bytes == 0) {
    return ParseError::kZeroFragmentSize;
  }
  if (f.fragment_bytes > limits.max_fragment_bytes) {
    return ParseError::kFragmentSizeTooLarge;
  }
  if (f.fragment_index >= f.fragment_count) {
    return ParseError::kFragmentIndexOutOfRange;
  }
  if (f.fragment_count != fragment_count_for(f.total_bytes, f.fragment_bytes)) {
    return ParseError::kFragmentCountMismatch;
  }
  const std::uint64_t offset = static_cast<std::uint64_t>(f.fragment_index) * f.fragment_bytes;
  const std::uint64_t expected =
      f.total_bytes == 0 ? 0 : std::min<std::uint64_t>(f.fragment_bytes, f.total_bytes - offset);
  if (payload_size != expected) {
    return ParseError::kFragmentPayloadMismatch;
  }
  return ParseError::kOk;
}

inline ParseError check_sequence_range(std::uint64_t first, std::uint64_t last_or_end, bool inclusive) noexcept {
  if (first == 0) {
    return ParseError::kZeroSequence;
  }
  if (inclusive) {  // [first, last]: empty when first == last + 1.
    return first <= last_or_end || first - last_or_end == 1 ? ParseError::kOk : ParseError::kBadSequenceRange;
  }
  return first < last_or_end ? ParseError::kOk : ParseError::kBadSequenceRange;
}

inline ParseError check_nack_range(const NackRange& r) noexcept {
  if (r.sequence == 0) {
    return ParseError::kZeroSequence;
  }
  return r.first_fragment < r.end_fragment ? ParseError::kOk : ParseError::kBadNackRange;
}

inline std::uint16_t load_u16(const SplitBytes& b, std::size_t at) noexcept {
  return static_cast<std::uint16_t>(load_u8(b, at) | (load_u8(b, at + 1) << 8));
}
inline void store_u16(std::span<std::byte> b, std::size_t at, std::uint16_t v) noexcept {
  store_u8(b, at, static_cast<std::uint8_t>(v & 0xFFU));
  store_u8(b, at + 1, static_cast<std::uint8_t>(v >> 8));
}

// A host name is 1..31 printable ASCII characters, then NUL up to the end.
inline bool valid_host(const std::array<char, kAnnounceHostBytes>& host) noexcept {
  std::size_t length = 0;
  while (length < host.size() && host[length] != '\0') {
    if (host[length] < 0x21 || host[length] > 0x7E) {
      return false;
    }
    ++length;
  }
  if (length == 0 || length == host.size()) {
    return false;
  }
  return std::all_of(host.begin() + static_cast<std::ptrdiff_t>(length), host.end(), [](char c) { return c == '\0'; });
}

inline bool valid_announce(const Announce& a) noexcept {
  return a.ipv4 != 0 && a.port != 0 && a.page_count >= 1 && a.page_count <= kMaxAnnouncePages &&
         a.page < a.page_count && a.period_ms >= 1 && a.period_ms <= 60000 && a.entry_count <= kMaxAnnounceEntries &&
         valid_host(a.host) && a.rdma.valid();
}

inline NackRange load_range(const SplitBytes& b) noexcept {
  return NackRange{.sequence = load_u64(b, nack::kRangeSequence),
                   .first_fragment = load_u32(b, nack::kRangeFirst),
                   .end_fragment = load_u32(b, nack::kRangeEnd)};
}

inline std::size_t header_bytes_of(DatagramType type) noexcept {
  switch (type) {
    case DatagramType::kData: return kDataHeaderBytes;
    case DatagramType::kHeartbeat: return kHeartbeatBytes;
    case DatagramType::kNack: return kNackHeaderBytes;
    case DatagramType::kGap: return kGapBytes;
    case DatagramType::kAnnounce: return kAnnounceHeaderBytes;
    case DatagramType::kAck: return kAckBytes;
  }
  return 0;
}

}  // namespace axon::udp::wire_fields
