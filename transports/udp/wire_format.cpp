#include "transports/udp/wire_format.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>

#include "transports/udp/crc32c.hpp"

namespace axon::udp {
namespace {

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
namespace nack {
constexpr std::size_t kTargetSenderId = 24;
constexpr std::size_t kTopicId = 32;
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
constexpr std::size_t kReserved = 76;
static_assert(kHost + kAnnounceHostBytes == kEntryCount && kReserved + 4 == kAnnounceHeaderBytes);
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
std::uint8_t load_u8(std::span<const std::byte> b, std::size_t at) noexcept {
  return std::to_integer<std::uint8_t>(b[at]);
}
std::uint32_t load_u32(std::span<const std::byte> b, std::size_t at) noexcept {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    v |= static_cast<std::uint32_t>(std::to_integer<std::uint8_t>(b[at + i])) << (8 * i);
  }
  return v;
}
// The same over a datagram in two pieces: a field may straddle them.
std::uint8_t load_u8(const SplitBytes& b, std::size_t at) noexcept {
  return at < b.head.size() ? load_u8(b.head, at) : load_u8(b.tail, at - b.head.size());
}
std::uint32_t load_u32(const SplitBytes& b, std::size_t at) noexcept {
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
std::uint64_t load_u64(const SplitBytes& b, std::size_t at) noexcept {
  return static_cast<std::uint64_t>(load_u32(b, at)) | (static_cast<std::uint64_t>(load_u32(b, at + 4)) << 32);
}
void store_u8(std::span<std::byte> b, std::size_t at, std::uint8_t v) noexcept { b[at] = std::byte{v}; }
void store_u32(std::span<std::byte> b, std::size_t at, std::uint32_t v) noexcept {
  for (std::size_t i = 0; i < 4; ++i) {
    b[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xFFU);
  }
}
void store_u64(std::span<std::byte> b, std::size_t at, std::uint64_t v) noexcept {
  store_u32(b, at, static_cast<std::uint32_t>(v));
  store_u32(b, at + 4, static_cast<std::uint32_t>(v >> 32));
}

constexpr std::array<std::byte, 4> kZeroChecksum{};

std::uint32_t crc32c_of(const SplitBytes& bytes, std::uint32_t crc) noexcept {
  return crc32c(bytes.tail, crc32c(bytes.head, crc));
}

// CRC-32C of a whole datagram with the checksum field read as zero.
std::uint32_t datagram_checksum(const SplitBytes& datagram) noexcept {
  std::uint32_t crc = crc32c_of(datagram.subrange(0, common::kChecksum), 0);
  crc = crc32c(kZeroChecksum, crc);
  return crc32c_of(datagram.subrange(common::kChecksum + 4), crc);
}

// The rules of a DATA fragment shared by the parser and the encoder.
ParseError check_data(const DataFragment& f, std::size_t payload_size, const WireLimits& limits) noexcept {
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

ParseError check_sequence_range(std::uint64_t first, std::uint64_t last_or_end, bool inclusive) noexcept {
  if (first == 0) {
    return ParseError::kZeroSequence;
  }
  if (inclusive) {  // [first, last]: empty when first == last + 1.
    return first <= last_or_end || first - last_or_end == 1 ? ParseError::kOk : ParseError::kBadSequenceRange;
  }
  return first < last_or_end ? ParseError::kOk : ParseError::kBadSequenceRange;
}

ParseError check_nack_range(const NackRange& r) noexcept {
  if (r.sequence == 0) {
    return ParseError::kZeroSequence;
  }
  return r.first_fragment < r.end_fragment ? ParseError::kOk : ParseError::kBadNackRange;
}

std::uint16_t load_u16(const SplitBytes& b, std::size_t at) noexcept {
  return static_cast<std::uint16_t>(load_u8(b, at) | (load_u8(b, at + 1) << 8));
}
void store_u16(std::span<std::byte> b, std::size_t at, std::uint16_t v) noexcept {
  store_u8(b, at, static_cast<std::uint8_t>(v & 0xFFU));
  store_u8(b, at + 1, static_cast<std::uint8_t>(v >> 8));
}

// A host name is 1..31 printable ASCII characters, then NUL up to the end.
bool valid_host(const std::array<char, kAnnounceHostBytes>& host) noexcept {
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

bool valid_announce(const Announce& a) noexcept {
  return a.ipv4 != 0 && a.port != 0 && a.page_count >= 1 && a.page_count <= kMaxAnnouncePages &&
         a.page < a.page_count && a.period_ms >= 1 && a.period_ms <= 60000 && a.entry_count <= kMaxAnnounceEntries &&
         valid_host(a.host);
}

NackRange load_range(const SplitBytes& b) noexcept {
  return NackRange{.sequence = load_u64(b, nack::kRangeSequence),
                   .first_fragment = load_u32(b, nack::kRangeFirst),
                   .end_fragment = load_u32(b, nack::kRangeEnd)};
}

std::size_t header_bytes_of(DatagramType type) noexcept {
  switch (type) {
    case DatagramType::kData: return kDataHeaderBytes;
    case DatagramType::kHeartbeat: return kHeartbeatBytes;
    case DatagramType::kNack: return kNackHeaderBytes;
    case DatagramType::kGap: return kGapBytes;
    case DatagramType::kAnnounce: return kAnnounceHeaderBytes;
  }
  return 0;
}

ParseError parse_body(const SplitBytes& b, const WireLimits& limits, ParsedDatagram& out) noexcept {
  switch (out.header.type) {
    case DatagramType::kData: {
      DataFragment f;
      f.topic_id = load_u64(b, data::kTopicId);
      f.sequence = load_u64(b, data::kSequence);
      f.writer_id = load_u32(b, data::kWriterId);
      f.total_bytes = load_u32(b, data::kTotalBytes);
      f.fragment_index = load_u32(b, data::kFragmentIndex);
      f.fragment_count = load_u32(b, data::kFragmentCount);
      f.fragment_bytes = load_u32(b, data::kFragmentBytes);
      const std::uint32_t payload_bytes = load_u32(b, data::kPayloadBytes);
      // One piece: the whole datagram, or the second one of a split receive
      // (whose first piece is exactly the header).
      const SplitBytes payload = b.subrange(kDataHeaderBytes);
      f.payload = payload.head.empty() ? payload.tail : payload.head;
      if (payload_bytes != f.payload.size()) {
        return ParseError::kPayloadLengthMismatch;
      }
      out.data = f;
      return check_data(f, f.payload.size(), limits);
    }
    case DatagramType::kHeartbeat: {
      if (load_u32(b, heartbeat::kReserved) != 0 || b.size() != kHeartbeatBytes) {
        return b.size() != kHeartbeatBytes ? ParseError::kLengthMismatch : ParseError::kReservedNotZero;
      }
      Heartbeat h{.topic_id = load_u64(b, heartbeat::kTopicId),
                  .first_sequence = load_u64(b, heartbeat::kFirstSequence),
                  .last_sequence = load_u64(b, heartbeat::kLastSequence),
                  .writer_id = load_u32(b, heartbeat::kWriterId)};
      out.heartbeat = h;
      return check_sequence_range(h.first_sequence, h.last_sequence, true);
    }
    case DatagramType::kGap: {
      if (load_u32(b, heartbeat::kReserved) != 0 || b.size() != kGapBytes) {
        return b.size() != kGapBytes ? ParseError::kLengthMismatch : ParseError::kReservedNotZero;
      }
      Gap g{.topic_id = load_u64(b, heartbeat::kTopicId),
            .first_sequence = load_u64(b, heartbeat::kFirstSequence),
            .end_sequence = load_u64(b, heartbeat::kLastSequence),
            .writer_id = load_u32(b, heartbeat::kWriterId)};
      out.gap = g;
      return check_sequence_range(g.first_sequence, g.end_sequence, false);
    }
    case DatagramType::kNack: {
      Nack n;
      n.target_sender_id = load_u64(b, nack::kTargetSenderId);
      n.topic_id = load_u64(b, nack::kTopicId);
      n.writer_id = load_u32(b, nack::kWriterId);
      n.range_count = load_u32(b, nack::kRangeCount);
      if (n.range_count > kMaxNackRanges) {
        return ParseError::kTooManyNackRanges;
      }
      if (n.range_count == 0) {
        return ParseError::kBadNackRange;
      }
      // range_count <= 64, so the product cannot overflow.
      if (b.size() != kNackHeaderBytes + n.range_count * kNackRangeBytes) {
        return ParseError::kLengthMismatch;
      }
      n.encoded_ranges = b.subrange(kNackHeaderBytes);
      for (std::size_t i = 0; i < n.range_count; ++i) {
        if (const ParseError e = check_nack_range(n.range(i)); e != ParseError::kOk) {
          return e;
        }
      }
      out.nack = n;
      return ParseError::kOk;
    }
    case DatagramType::kAnnounce: {
      Announce a;
      a.domain_id = load_u32(b, announce::kDomainId);
      a.ipv4 = load_u32(b, announce::kIpv4);
      a.port = load_u16(b, announce::kPort);
      a.page = load_u8(b, announce::kPage);
      a.page_count = load_u8(b, announce::kPageCount);
      a.period_ms = load_u32(b, announce::kPeriodMs);
      for (std::size_t i = 0; i < kAnnounceHostBytes; ++i) {
        a.host[i] = static_cast<char>(load_u8(b, announce::kHost + i));
      }
      a.entry_count = load_u32(b, announce::kEntryCount);
      if (load_u32(b, announce::kReserved) != 0) {
        return ParseError::kReservedNotZero;
      }
      if (!valid_announce(a)) {
        return ParseError::kBadAnnounce;
      }
      // entry_count <= 40, so the product cannot overflow.
      if (b.size() != kAnnounceHeaderBytes + a.entry_count * kAnnounceEntryBytes) {
        return ParseError::kLengthMismatch;
      }
      a.encoded_entries = b.subrange(kAnnounceHeaderBytes);
      for (std::size_t i = 0; i < a.entry_count; ++i) {
        if ((a.entry(i).flags & ~kKnownEntryFlags) != 0) {
          return ParseError::kBadAnnounce;
        }
      }
      if ((out.header.flags & kFlagReliable) != 0) {
        return ParseError::kUnknownFlags;
      }
      out.announce = a;
      return ParseError::kOk;
    }
  }
  return ParseError::kUnknownType;
}

void store_common(std::span<std::byte> out, DatagramType type, std::uint64_t sender_id, std::size_t datagram_bytes,
                  bool checksum, bool reliable = false) noexcept {
  store_u32(out, common::kMagic, kMagic);
  store_u8(out, common::kVersion, kWireVersion);
  store_u8(out, common::kType, static_cast<std::uint8_t>(type));
  store_u8(out, common::kFlags,
           static_cast<std::uint8_t>((checksum ? kFlagChecksum : 0) | (reliable ? kFlagReliable : 0)));
  store_u8(out, common::kReserved, 0);
  store_u64(out, common::kSenderId, sender_id);
  store_u32(out, common::kChecksum, 0);
  store_u32(out, common::kDatagramBytes, static_cast<std::uint32_t>(datagram_bytes));
}

void seal(std::span<std::byte> header, std::span<const std::byte> body, bool checksum) noexcept {
  if (checksum) {
    store_u32(header, common::kChecksum, datagram_checksum(SplitBytes{.head = header, .tail = body}));
  }
}

constexpr WireLimits kEncodeLimits{.max_message_bytes = std::numeric_limits<std::uint32_t>::max(),
                                   .max_fragment_bytes = kMaxDatagramBytes - kDataHeaderBytes,
                                   .require_checksum = false};

}  // namespace

std::string_view to_string(ParseError error) noexcept {
  switch (error) {
    case ParseError::kOk: return "ok";
    case ParseError::kTruncatedHeader: return "udp: datagram shorter than the 24-byte common header";
    case ParseError::kDatagramTooLarge: return "udp: datagram longer than 65507 bytes";
    case ParseError::kBadMagic: return "udp: bad magic (not an axon datagram)";
    case ParseError::kUnsupportedVersion: return "udp: unsupported wire version";
    case ParseError::kUnknownType: return "udp: unknown datagram type";
    case ParseError::kUnknownFlags: return "udp: unknown flag bits";
    case ParseError::kReservedNotZero: return "udp: reserved field (or checksum without its flag) not zero";
    case ParseError::kZeroSenderId: return "udp: sender id 0";
    case ParseError::kLengthMismatch: return "udp: length field differs from the datagram size";
    case ParseError::kTruncatedBody: return "udp: datagram shorter than the header of its type";
    case ParseError::kChecksumMissing: return "udp: checksum required but absent";
    case ParseError::kBadChecksum: return "udp: CRC-32C mismatch";
    case ParseError::kZeroSequence: return "udp: sequence 0 (sequences start at 1)";
    case ParseError::kPayloadLengthMismatch: return "udp: payload_bytes differs from the bytes after the header";
    case ParseError::kZeroFragmentCount: return "udp: fragment count 0";
    case ParseError::kZeroFragmentSize: return "udp: fragment size 0";
    case ParseError::kFragmentSizeTooLarge: return "udp: fragment size above the limit";
    case ParseError::kFragmentIndexOutOfRange: return "udp: fragment index >= fragment count";
    case ParseError::kFragmentCountMismatch: return "udp: fragment count inconsistent with total size";
    case ParseError::kFragmentPayloadMismatch: return "udp: fragment payload size inconsistent with its index";
    case ParseError::kMessageTooLarge: return "udp: message total size above the limit";
    case ParseError::kBadSequenceRange: return "udp: bad sequence range";
    case ParseError::kTooManyNackRanges: return "udp: NACK with more than 64 ranges";
    case ParseError::kBadNackRange: return "udp: NACK without ranges or with first >= end";
    case ParseError::kBadAnnounce: return "udp: ANNOUNCE with a bad page, entry count, host name, address or flags";
    case ParseError::kCount: break;
  }
  return "udp: unknown parse error";
}

ParseError check_fragment(const DataFragment& fragment, const WireLimits& limits) noexcept {
  return check_data(fragment, fragment.payload.size(), limits);
}

SplitBytes SplitBytes::subrange(std::size_t offset, std::size_t count) const noexcept {
  offset = std::min(offset, size());
  count = std::min(count, size() - offset);
  if (offset >= head.size()) {
    return SplitBytes{.head = {}, .tail = tail.subspan(offset - head.size(), count)};
  }
  const std::size_t in_head = std::min(count, head.size() - offset);
  return SplitBytes{.head = head.subspan(offset, in_head), .tail = tail.first(count - in_head)};
}

NackRange Nack::range(std::size_t i) const noexcept {
  return load_range(encoded_ranges.subrange(i * kNackRangeBytes, kNackRangeBytes));
}

AnnounceEntry Announce::entry(std::size_t i) const noexcept {
  const SplitBytes e = encoded_entries.subrange(i * kAnnounceEntryBytes, kAnnounceEntryBytes);
  return AnnounceEntry{.topic_id = load_u64(e, announce::kTopicId),
                       .type_hash = load_u64(e, announce::kTypeHash),
                       .type_name_hash = load_u64(e, announce::kTypeNameHash),
                       .flags = load_u32(e, announce::kFlags),
                       .subscribers = load_u32(e, announce::kSubscribers)};
}

std::string_view Announce::host_name() const noexcept {
  std::size_t length = 0;
  while (length < host.size() && host[length] != '\0') {
    ++length;
  }
  return {host.data(), length};
}

namespace {

// The parser, over a datagram in one piece or two: both entry points below
// run exactly these checks.
ParseError parse(const SplitBytes& bytes, const WireLimits& limits, ParsedDatagram& out) noexcept {
  if (bytes.size() < kCommonHeaderBytes) {
    return ParseError::kTruncatedHeader;
  }
  if (bytes.size() > kMaxDatagramBytes) {
    return ParseError::kDatagramTooLarge;
  }
  if (load_u32(bytes, common::kMagic) != kMagic) {
    return ParseError::kBadMagic;
  }
  if (load_u8(bytes, common::kVersion) != kWireVersion) {
    return ParseError::kUnsupportedVersion;
  }
  const std::uint8_t type = load_u8(bytes, common::kType);
  if (type < static_cast<std::uint8_t>(DatagramType::kData) ||
      type > static_cast<std::uint8_t>(DatagramType::kAnnounce)) {
    return ParseError::kUnknownType;
  }
  DatagramHeader& h = out.header;
  h.type = static_cast<DatagramType>(type);
  h.flags = load_u8(bytes, common::kFlags);
  const std::uint8_t allowed =
      kFlagChecksum | (h.type == DatagramType::kData || h.type == DatagramType::kHeartbeat ? kFlagReliable : 0) |
      (h.type == DatagramType::kAnnounce ? kFlagRelayed : 0);
  if ((h.flags & ~allowed) != 0) {
    return ParseError::kUnknownFlags;
  }
  if (load_u8(bytes, common::kReserved) != 0) {
    return ParseError::kReservedNotZero;
  }
  h.sender_id = load_u64(bytes, common::kSenderId);
  if (h.sender_id == 0) {
    return ParseError::kZeroSenderId;
  }
  h.checksum = load_u32(bytes, common::kChecksum);
  h.datagram_bytes = load_u32(bytes, common::kDatagramBytes);
  if (h.datagram_bytes != bytes.size()) {
    return ParseError::kLengthMismatch;
  }
  if (bytes.size() < header_bytes_of(h.type)) {
    return ParseError::kTruncatedBody;
  }
  if ((h.flags & kFlagChecksum) != 0) {
    if (datagram_checksum(bytes) != h.checksum) {
      return ParseError::kBadChecksum;
    }
  } else if (limits.require_checksum) {
    return ParseError::kChecksumMissing;
  } else if (h.checksum != 0) {
    return ParseError::kReservedNotZero;
  }
  return parse_body(bytes, limits, out);
}

}  // namespace

ParseError parse_datagram(std::span<const std::byte> bytes, const WireLimits& limits, ParsedDatagram& out) noexcept {
  return parse(SplitBytes{.head = bytes, .tail = {}}, limits, out);
}

ParseError parse_split_datagram(std::span<const std::byte> header, std::span<const std::byte> payload,
                                const WireLimits& limits, ParsedDatagram& out) noexcept {
  // A DATA payload must be one piece: with the header split anywhere else it
  // would straddle both (the parser then refuses it for its payload length).
  assert((payload.empty() || header.size() == kDataHeaderBytes) && "header must be the first 64 bytes exactly");
  return parse(SplitBytes{.head = header, .tail = payload}, limits, out);
}

Result<ParsedDatagram> parse_datagram(std::span<const std::byte> bytes, const WireLimits& limits) noexcept {
  ParsedDatagram out;
  const ParseError error = parse_datagram(bytes, limits, out);
  if (error == ParseError::kOk) {
    return out;
  }
  // to_string() returns literals, so the message needs no allocation.
  return Error(error == ParseError::kUnsupportedVersion ? ErrorCode::kIncompatible : ErrorCode::kMalformed,
               to_string(error).data());
}

std::uint64_t ParseCounters::refused() const noexcept {
  std::uint64_t sum = 0;
  for (std::size_t i = 1; i < counts_.size(); ++i) {
    sum += counts_[i];
  }
  return sum;
}

std::size_t encode_data_header(std::span<std::byte> out, std::uint64_t sender_id, const DataFragment& fragment,
                               bool checksum, bool reliable) noexcept {
  const std::size_t size = kDataHeaderBytes + fragment.payload.size();
  if (out.size() < kDataHeaderBytes || size > kMaxDatagramBytes || sender_id == 0 ||
      check_data(fragment, fragment.payload.size(), kEncodeLimits) != ParseError::kOk) {
    return 0;
  }
  const std::span<std::byte> h = out.first(kDataHeaderBytes);
  store_common(h, DatagramType::kData, sender_id, size, checksum, reliable);
  store_u64(h, data::kTopicId, fragment.topic_id);
  store_u64(h, data::kSequence, fragment.sequence);
  store_u32(h, data::kWriterId, fragment.writer_id);
  store_u32(h, data::kTotalBytes, fragment.total_bytes);
  store_u32(h, data::kFragmentIndex, fragment.fragment_index);
  store_u32(h, data::kFragmentCount, fragment.fragment_count);
  store_u32(h, data::kFragmentBytes, fragment.fragment_bytes);
  store_u32(h, data::kPayloadBytes, static_cast<std::uint32_t>(fragment.payload.size()));
  seal(h, fragment.payload, checksum);
  return size;
}

std::size_t encode_data(std::span<std::byte> out, std::uint64_t sender_id, const DataFragment& fragment, bool checksum,
                        bool reliable) noexcept {
  const std::size_t size = kDataHeaderBytes + fragment.payload.size();
  if (out.size() < size || encode_data_header(out, sender_id, fragment, checksum, reliable) == 0) {
    return 0;
  }
  if (!fragment.payload.empty()) {
    std::memcpy(out.data() + kDataHeaderBytes, fragment.payload.data(), fragment.payload.size());
  }
  return size;
}

std::size_t encode_heartbeat(std::span<std::byte> out, std::uint64_t sender_id, const Heartbeat& heartbeat,
                             bool checksum, bool reliable) noexcept {
  if (out.size() < kHeartbeatBytes || sender_id == 0 ||
      check_sequence_range(heartbeat.first_sequence, heartbeat.last_sequence, true) != ParseError::kOk) {
    return 0;
  }
  const std::span<std::byte> h = out.first(kHeartbeatBytes);
  store_common(h, DatagramType::kHeartbeat, sender_id, kHeartbeatBytes, checksum, reliable);
  store_u64(h, heartbeat::kTopicId, heartbeat.topic_id);
  store_u64(h, heartbeat::kFirstSequence, heartbeat.first_sequence);
  store_u64(h, heartbeat::kLastSequence, heartbeat.last_sequence);
  store_u32(h, heartbeat::kWriterId, heartbeat.writer_id);
  store_u32(h, heartbeat::kReserved, 0);
  seal(h, {}, checksum);
  return kHeartbeatBytes;
}

std::size_t encode_gap(std::span<std::byte> out, std::uint64_t sender_id, const Gap& gap, bool checksum) noexcept {
  if (out.size() < kGapBytes || sender_id == 0 ||
      check_sequence_range(gap.first_sequence, gap.end_sequence, false) != ParseError::kOk) {
    return 0;
  }
  const std::span<std::byte> h = out.first(kGapBytes);
  store_common(h, DatagramType::kGap, sender_id, kGapBytes, checksum);
  store_u64(h, heartbeat::kTopicId, gap.topic_id);
  store_u64(h, heartbeat::kFirstSequence, gap.first_sequence);
  store_u64(h, heartbeat::kLastSequence, gap.end_sequence);
  store_u32(h, heartbeat::kWriterId, gap.writer_id);
  store_u32(h, heartbeat::kReserved, 0);
  seal(h, {}, checksum);
  return kGapBytes;
}

std::size_t encode_nack(std::span<std::byte> out, std::uint64_t sender_id, std::uint64_t target_sender_id,
                        std::uint64_t topic_id, std::uint32_t writer_id, std::span<const NackRange> ranges,
                        bool checksum) noexcept {
  const std::size_t size = kNackHeaderBytes + ranges.size() * kNackRangeBytes;
  if (ranges.empty() || ranges.size() > kMaxNackRanges || out.size() < size || sender_id == 0) {
    return 0;
  }
  for (const NackRange& r : ranges) {
    if (check_nack_range(r) != ParseError::kOk) {
      return 0;
    }
  }
  const std::span<std::byte> d = out.first(size);
  store_common(d, DatagramType::kNack, sender_id, size, checksum);
  store_u64(d, nack::kTargetSenderId, target_sender_id);
  store_u64(d, nack::kTopicId, topic_id);
  store_u32(d, nack::kWriterId, writer_id);
  store_u32(d, nack::kRangeCount, static_cast<std::uint32_t>(ranges.size()));
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const std::span<std::byte> r = d.subspan(kNackHeaderBytes + i * kNackRangeBytes, kNackRangeBytes);
    store_u64(r, nack::kRangeSequence, ranges[i].sequence);
    store_u32(r, nack::kRangeFirst, ranges[i].first_fragment);
    store_u32(r, nack::kRangeEnd, ranges[i].end_fragment);
  }
  seal(d.first(kCommonHeaderBytes), d.subspan(kCommonHeaderBytes), checksum);
  return size;
}

DataFragment make_fragment(std::uint64_t topic_id, std::uint32_t writer_id, std::uint64_t sequence,
                           std::span<const std::byte> message, std::uint32_t fragment_bytes,
                           std::uint32_t index) noexcept {
  DataFragment f;
  f.topic_id = topic_id;
  f.sequence = sequence;
  f.writer_id = writer_id;
  f.total_bytes = static_cast<std::uint32_t>(message.size());
  f.fragment_index = index;
  f.fragment_bytes = fragment_bytes;
  f.fragment_count =
      fragment_bytes == 0 ? 0 : static_cast<std::uint32_t>(fragment_count_for(message.size(), fragment_bytes));
  const std::uint64_t offset = static_cast<std::uint64_t>(index) * fragment_bytes;
  if (offset < message.size()) {
    f.payload = message.subspan(offset, std::min<std::uint64_t>(fragment_bytes, message.size() - offset));
  }
  return f;
}

std::size_t encode_announce(std::span<std::byte> out, std::uint64_t sender_id, const Announce& announce,
                            std::span<const AnnounceEntry> entries, std::uint8_t flags, bool checksum) noexcept {
  Announce a = announce;
  a.entry_count = static_cast<std::uint32_t>(entries.size());
  const std::size_t size = kAnnounceHeaderBytes + entries.size() * kAnnounceEntryBytes;
  if (entries.size() > kMaxAnnounceEntries || out.size() < size || sender_id == 0 || !valid_announce(a) ||
      (flags & ~kFlagRelayed) != 0) {
    return 0;
  }
  for (const AnnounceEntry& e : entries) {
    if ((e.flags & ~kKnownEntryFlags) != 0) {
      return 0;
    }
  }
  const std::span<std::byte> d = out.first(size);
  store_common(d, DatagramType::kAnnounce, sender_id, size, checksum);
  store_u8(d, common::kFlags, static_cast<std::uint8_t>(load_u8(d, common::kFlags) | flags));
  store_u32(d, announce::kDomainId, a.domain_id);
  store_u32(d, announce::kIpv4, a.ipv4);
  store_u16(d, announce::kPort, a.port);
  store_u8(d, announce::kPage, a.page);
  store_u8(d, announce::kPageCount, a.page_count);
  store_u32(d, announce::kPeriodMs, a.period_ms);
  for (std::size_t i = 0; i < kAnnounceHostBytes; ++i) {
    store_u8(d, announce::kHost + i, static_cast<std::uint8_t>(a.host[i]));
  }
  store_u32(d, announce::kEntryCount, a.entry_count);
  store_u32(d, announce::kReserved, 0);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::span<std::byte> e = d.subspan(kAnnounceHeaderBytes + i * kAnnounceEntryBytes, kAnnounceEntryBytes);
    store_u64(e, announce::kTopicId, entries[i].topic_id);
    store_u64(e, announce::kTypeHash, entries[i].type_hash);
    store_u64(e, announce::kTypeNameHash, entries[i].type_name_hash);
    store_u32(e, announce::kFlags, entries[i].flags);
    store_u32(e, announce::kSubscribers, entries[i].subscribers);
  }
  seal(d.first(kCommonHeaderBytes), d.subspan(kCommonHeaderBytes), checksum);
  return size;
}

void set_relayed_flag(std::span<std::byte> datagram) noexcept {
  const std::uint8_t flags = load_u8(datagram, common::kFlags);
  store_u8(datagram, common::kFlags, static_cast<std::uint8_t>(flags | kFlagRelayed));
  if ((flags & kFlagChecksum) != 0) {
    store_u32(datagram, common::kChecksum, 0);
    seal(datagram.first(kCommonHeaderBytes), datagram.subspan(kCommonHeaderBytes), true);
  }
}

}  // namespace axon::udp
