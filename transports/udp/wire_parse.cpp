// The hardened parser of the wire format (wire_format.hpp): every field another host wrote is checked
// before it becomes a size, an index or an offset.
#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>

#include "transports/udp/wire_fields.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp {

using namespace wire_fields;  // the layout of this format, shared with the other half of it

namespace {

ParseError parse_data(const SplitBytes& b, const WireLimits& limits, ParsedDatagram& out) noexcept {
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

ParseError parse_heartbeat(const SplitBytes& b, ParsedDatagram& out) noexcept {
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

ParseError parse_gap(const SplitBytes& b, ParsedDatagram& out) noexcept {
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

ParseError parse_ack(const SplitBytes& b, ParsedDatagram& out) noexcept {
  if (load_u32(b, ack::kReserved) != 0 || b.size() != kAckBytes) {
    return b.size() != kAckBytes ? ParseError::kLengthMismatch : ParseError::kReservedNotZero;
  }
  const Ack a{.target_sender_id = load_u64(b, ack::kTargetSenderId),
              .topic_id = load_u64(b, ack::kTopicId),
              .next_sequence = load_u64(b, ack::kNextSequence),
              .writer_id = load_u32(b, ack::kWriterId)};
  out.ack = a;
  return a.next_sequence == 0 ? ParseError::kZeroSequence : ParseError::kOk;
}

ParseError parse_nack(const SplitBytes& b, ParsedDatagram& out) noexcept {
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

ParseError parse_announce(const SplitBytes& b, ParsedDatagram& out) noexcept {
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
  a.rdma.cm_port = load_u16(b, announce::kRdmaCmPort);
  const std::uint8_t rdma_flags = load_u8(b, announce::kRdmaFlags);
  a.rdma.reachable = (rdma_flags & kRdmaReachable) != 0;
  if (load_u8(b, announce::kReserved) != 0) {
    return ParseError::kReservedNotZero;
  }
  if ((rdma_flags & ~kRdmaReachable) != 0 || !valid_announce(a)) {
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

ParseError parse_body(const SplitBytes& b, const WireLimits& limits, ParsedDatagram& out) noexcept {
  switch (out.header.type) {
    case DatagramType::kData: return parse_data(b, limits, out);
    case DatagramType::kHeartbeat: return parse_heartbeat(b, out);
    case DatagramType::kGap: return parse_gap(b, out);
    case DatagramType::kNack: return parse_nack(b, out);
    case DatagramType::kAnnounce: return parse_announce(b, out);
    case DatagramType::kAck: return parse_ack(b, out);
  }
  return ParseError::kUnknownType;
}

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
    case ParseError::kBadAnnounce:
      return "udp: ANNOUNCE with a bad page, entry count, host name, address, flags or RDMA port";
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
  if (type < static_cast<std::uint8_t>(DatagramType::kData) || type > static_cast<std::uint8_t>(DatagramType::kAck)) {
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

}  // namespace axon::udp
