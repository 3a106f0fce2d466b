// The hardened parser of the control messages (control_message.hpp): every
// field another host wrote is checked before it becomes a size, an index or an
// address.
#include <limits>

#include "transports/rdma/control_message.hpp"
#include "transports/rdma/control_rules.hpp"
#include "transports/rdma/little_endian.hpp"

namespace axon::rdma {
namespace {

namespace layout = control_layout;
using le::load;

ControlError check_header(std::span<const std::byte> b) noexcept {
  if (b.size() < kControlHeaderBytes) {
    return ControlError::kTruncatedHeader;
  }
  if (b.size() > kControlSlotBytes) {
    return ControlError::kLongerThanSlot;
  }
  if (load<std::uint32_t>(b, layout::header::kMagic) != kControlMagic) {
    return ControlError::kBadMagic;
  }
  if (load<std::uint8_t>(b, layout::header::kVersion) != kControlVersion) {
    return ControlError::kUnsupportedVersion;
  }
  const auto kind = load<std::uint8_t>(b, layout::header::kKind);
  if (kind < static_cast<std::uint8_t>(ControlKind::kOpen) || kind > static_cast<std::uint8_t>(ControlKind::kWant)) {
    return ControlError::kUnknownKind;
  }
  if (load<std::uint16_t>(b, layout::header::kReserved) != 0) {
    return ControlError::kReservedNotZero;
  }
  const auto message_bytes = load<std::uint32_t>(b, layout::header::kMessageBytes);
  if (message_bytes > b.size()) {
    return ControlError::kLengthPastBuffer;
  }
  if (message_bytes < b.size()) {
    return ControlError::kLengthBelowBuffer;
  }
  return load<std::uint32_t>(b, layout::header::kStreamId) == 0 ? ControlError::kZeroStreamId : ControlError::kOk;
}

ControlError parse_open(std::span<const std::byte> b, ControlMessage& out) noexcept {
  if (b.size() != kOpenBytes) {
    return ControlError::kWrongSizeForKind;
  }
  if (load<std::uint16_t>(b, layout::open::kReserved16) != 0 ||
      load<std::uint32_t>(b, layout::open::kReserved32) != 0) {
    return ControlError::kReservedNotZero;
  }
  // The enums are read as bytes and checked before anyone switches on them.
  const OpenFields open{.topic_id = load<std::uint64_t>(b, layout::open::kTopicId),
                        .type_hash = load<std::uint64_t>(b, layout::open::kTypeHash),
                        .writer_id = load<std::uint32_t>(b, layout::open::kWriterId),
                        .largest_message_bytes = load<std::uint32_t>(b, layout::open::kLargestMessageBytes),
                        .reliability = static_cast<WireReliability>(load<std::uint8_t>(b, layout::open::kReliability)),
                        .overflow = static_cast<WireOverflow>(load<std::uint8_t>(b, layout::open::kOverflow)),
                        .block_timeout_ns = load<std::uint64_t>(b, layout::open::kBlockTimeoutNs)};
  if (const ControlError e = control_rules::check_open(open); e != ControlError::kOk) {
    return e;
  }
  out.open = open;
  return ControlError::kOk;
}

ControlError parse_want(std::span<const std::byte> b, ControlMessage& out) noexcept {
  if (b.size() != kWantBytes) {
    return ControlError::kWrongSizeForKind;
  }
  if (load<std::uint32_t>(b, layout::want::kReserved) != 0) {
    return ControlError::kReservedNotZero;
  }
  out.messages_waiting = load<std::uint32_t>(b, layout::want::kMessagesWaiting);
  return ControlError::kOk;
}

ControlError check_entry_reserved(std::span<const std::byte> entry) noexcept {
  const bool zero = load<std::uint8_t>(entry, layout::grant::kReserved8) == 0 &&
                    load<std::uint16_t>(entry, layout::grant::kReserved16) == 0 &&
                    load<std::uint32_t>(entry, layout::grant::kReserved32) == 0;
  return zero ? ControlError::kOk : ControlError::kReservedNotZero;
}

ControlError parse_grant(std::span<const std::byte> b, const PeerRegion& region, ControlMessage& out) noexcept {
  if (b.size() < kGrantHeaderBytes) {
    return ControlError::kWrongSizeForKind;
  }
  if (load<std::uint32_t>(b, layout::grant::kReserved) != 0) {
    return ControlError::kReservedNotZero;
  }
  const auto count = load<std::uint32_t>(b, layout::grant::kGrantCount);
  if (const ControlError e = control_rules::check_grant_count(count); e != ControlError::kOk) {
    return e;
  }
  // count <= 169, so the product cannot overflow.
  if (b.size() != kGrantHeaderBytes + count * kGrantEntryBytes) {
    return ControlError::kWrongSizeForKind;
  }
  const GrantList grants{.count = count, .encoded_entries = b.subspan(kGrantHeaderBytes)};
  for (std::size_t i = 0; i < count; ++i) {
    if (const ControlError e = check_entry_reserved(grants.encoded_entries.subspan(i * kGrantEntryBytes));
        e != ControlError::kOk) {
      return e;
    }
    if (const ControlError e = control_rules::check_grant(grants.entry(i), region); e != ControlError::kOk) {
      return e;
    }
  }
  out.grant = grants;
  return ControlError::kOk;
}

}  // namespace

GrantEntry GrantList::entry(std::size_t i) const noexcept {
  const std::span<const std::byte> e = encoded_entries.subspan(i * kGrantEntryBytes, kGrantEntryBytes);
  return GrantEntry{.address = load<std::uint64_t>(e, layout::grant::kAddress),
                    .capacity_bytes = load<std::uint32_t>(e, layout::grant::kCapacityBytes),
                    .slot = load<std::uint32_t>(e, layout::grant::kSlot),
                    .size_class = load<std::uint8_t>(e, layout::grant::kSizeClass)};
}

ControlError parse_control(std::span<const std::byte> bytes, const PeerRegion& region, ControlMessage& out) noexcept {
  if (const ControlError e = check_header(bytes); e != ControlError::kOk) {
    return e;
  }
  ControlMessage parsed;
  parsed.kind = static_cast<ControlKind>(load<std::uint8_t>(bytes, layout::header::kKind));
  parsed.stream_id = load<std::uint32_t>(bytes, layout::header::kStreamId);
  ControlError error = ControlError::kOk;
  switch (parsed.kind) {
    case ControlKind::kOpen: error = parse_open(bytes, parsed); break;
    case ControlKind::kClose:
      error = bytes.size() == kCloseBytes ? ControlError::kOk : ControlError::kWrongSizeForKind;
      break;
    case ControlKind::kGrant: error = parse_grant(bytes, region, parsed); break;
    case ControlKind::kWant: error = parse_want(bytes, parsed); break;
  }
  if (error == ControlError::kOk) {
    out = parsed;
  }
  return error;
}

std::string_view to_string(ControlError error) noexcept {
  switch (error) {
    case ControlError::kOk: return "ok";
    case ControlError::kTruncatedHeader: return "rdma control: message shorter than the 16-byte header";
    case ControlError::kLongerThanSlot: return "rdma control: message longer than a 4096-byte control slot";
    case ControlError::kBadMagic: return "rdma control: magic is not AXRC (not an axon control message)";
    case ControlError::kUnsupportedVersion: return "rdma control: unsupported control version";
    case ControlError::kUnknownKind: return "rdma control: unknown kind (not OPEN, CLOSE, GRANT or WANT)";
    case ControlError::kReservedNotZero: return "rdma control: a reserved field is not zero";
    case ControlError::kLengthPastBuffer: return "rdma control: message bytes above the bytes received";
    case ControlError::kLengthBelowBuffer: return "rdma control: message bytes below the bytes received";
    case ControlError::kWrongSizeForKind:
      return "rdma control: message bytes not the size of its kind (GRANT: of its grant count)";
    case ControlError::kZeroStreamId: return "rdma control: stream id 0";
    case ControlError::kBadReliability: return "rdma control: OPEN reliability is not 0 (best effort) or 1 (reliable)";
    case ControlError::kBadOverflow: return "rdma control: OPEN overflow policy is not 0..4";
    case ControlError::kBadBlockTimeout: return "rdma control: OPEN block timeout above INT64_MAX nanoseconds";
    case ControlError::kZeroGrants: return "rdma control: GRANT count is 0";
    case ControlError::kTooManyGrants: return "rdma control: GRANT count above 169 (what a control slot holds)";
    case ControlError::kBadSizeClass: return "rdma control: GRANT entry size class is 16 or more";
    case ControlError::kZeroCapacity: return "rdma control: GRANT entry capacity is 0";
    case ControlError::kCapacityTooLarge: return "rdma control: GRANT entry capacity of 256 MiB or more (no slot bit)";
    case ControlError::kSlotOutOfRange: return "rdma control: GRANT entry slot beyond its capacity's slot bits";
    case ControlError::kAddressOverflow: return "rdma control: GRANT entry address + capacity passes 2^64";
    case ControlError::kOutsideRegion: return "rdma control: GRANT entry chunk outside the receiver's region";
    case ControlError::kCount: break;
  }
  return "rdma control: unknown parse error";
}

}  // namespace axon::rdma
