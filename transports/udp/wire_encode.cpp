// The encoder of the wire format (wire_format.hpp): headers, fragments, heartbeats, gaps, NACKs and
// ANNOUNCEs, checked against the same rules the parser applies.
#include <cassert>
#include <cstring>
#include <limits>

#include "transports/udp/wire_fields.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp {

using namespace wire_fields;  // the layout of this format, shared with the other half of it

namespace {
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

// ACK and NACK: the common header, then the sender and the topic they answer (wire_fields::addressed).
void store_addressed(std::span<std::byte> out, DatagramType type, std::uint64_t sender_id, std::size_t datagram_bytes,
                     std::uint64_t target_sender_id, std::uint64_t topic_id, bool checksum) noexcept {
  store_common(out, type, sender_id, datagram_bytes, checksum);
  store_u64(out, addressed::kTargetSenderId, target_sender_id);
  store_u64(out, addressed::kTopicId, topic_id);
}

void seal(std::span<std::byte> header, std::span<const std::byte> body, bool checksum) noexcept {
  if (checksum) {
    store_u32(header, common::kChecksum, datagram_checksum(SplitBytes{.head = header, .tail = body}));
  }
}

// HEARTBEAT ([first, last]) and GAP ([first, end)) share one layout (wire_fields::heartbeat).
struct SequenceSpan {
  std::uint64_t first;
  std::uint64_t last_or_end;
  bool inclusive;
};
std::size_t encode_sequence_span(std::span<std::byte> out, DatagramType type, std::uint64_t sender_id,
                                 std::uint64_t topic_id, std::uint32_t writer_id, SequenceSpan span, bool checksum,
                                 bool reliable) noexcept {
  static_assert(kHeartbeatBytes == kGapBytes);
  if (out.size() < kHeartbeatBytes || sender_id == 0 ||
      check_sequence_range(span.first, span.last_or_end, span.inclusive) != ParseError::kOk) {
    return 0;
  }
  const std::span<std::byte> h = out.first(kHeartbeatBytes);
  store_common(h, type, sender_id, kHeartbeatBytes, checksum, reliable);
  store_u64(h, heartbeat::kTopicId, topic_id);
  store_u64(h, heartbeat::kFirstSequence, span.first);
  store_u64(h, heartbeat::kLastSequence, span.last_or_end);
  store_u32(h, heartbeat::kWriterId, writer_id);
  store_u32(h, heartbeat::kReserved, 0);
  seal(h, {}, checksum);
  return kHeartbeatBytes;
}

constexpr WireLimits kEncodeLimits{.max_message_bytes = std::numeric_limits<std::uint32_t>::max(),
                                   .max_fragment_bytes = kMaxDatagramBytes - kDataHeaderBytes,
                                   .require_checksum = false};

}  // namespace

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
  return encode_sequence_span(
      out, DatagramType::kHeartbeat, sender_id, heartbeat.topic_id, heartbeat.writer_id,
      SequenceSpan{.first = heartbeat.first_sequence, .last_or_end = heartbeat.last_sequence, .inclusive = true},
      checksum, reliable);
}

std::size_t encode_gap(std::span<std::byte> out, std::uint64_t sender_id, const Gap& gap, bool checksum) noexcept {
  return encode_sequence_span(
      out, DatagramType::kGap, sender_id, gap.topic_id, gap.writer_id,
      SequenceSpan{.first = gap.first_sequence, .last_or_end = gap.end_sequence, .inclusive = false}, checksum, false);
}

std::size_t encode_ack(std::span<std::byte> out, std::uint64_t sender_id, const Ack& ack, bool checksum) noexcept {
  if (out.size() < kAckBytes || sender_id == 0 || ack.next_sequence == 0) {
    return 0;
  }
  const std::span<std::byte> h = out.first(kAckBytes);
  store_addressed(h, DatagramType::kAck, sender_id, kAckBytes, ack.target_sender_id, ack.topic_id, checksum);
  store_u64(h, ack::kNextSequence, ack.next_sequence);
  store_u32(h, ack::kWriterId, ack.writer_id);
  store_u32(h, ack::kReserved, 0);
  seal(h, {}, checksum);
  return kAckBytes;
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
  store_addressed(d, DatagramType::kNack, sender_id, size, target_sender_id, topic_id, checksum);
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
  store_u16(d, announce::kRdmaCmPort, a.rdma.cm_port);
  store_u8(d, announce::kRdmaFlags, a.rdma.reachable ? kRdmaReachable : 0);
  store_u8(d, announce::kReserved, 0);
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
