// The encoders of the control messages (control_message.hpp), into the
// caller's control slot, checked against the rules the parser applies.
#include "transports/rdma/control_message.hpp"
#include "transports/rdma/control_rules.hpp"
#include "transports/rdma/little_endian.hpp"

namespace axon::rdma {
namespace {

namespace layout = control_layout;
using le::store;

// The header of a `message_bytes` message; false (nothing written) when it
// does not fit `out` or the stream id is 0.
bool store_header(std::span<std::byte> out, ControlKind kind, std::uint32_t stream_id,
                  std::size_t message_bytes) noexcept {
  if (out.size() < message_bytes || message_bytes > kControlSlotBytes || stream_id == 0) {
    return false;
  }
  store<std::uint32_t>(out, layout::header::kMagic, kControlMagic);
  store<std::uint8_t>(out, layout::header::kVersion, kControlVersion);
  store<std::uint8_t>(out, layout::header::kKind, static_cast<std::uint8_t>(kind));
  store<std::uint16_t>(out, layout::header::kReserved, 0);
  store<std::uint32_t>(out, layout::header::kMessageBytes, static_cast<std::uint32_t>(message_bytes));
  store<std::uint32_t>(out, layout::header::kStreamId, stream_id);
  return true;
}

}  // namespace

std::size_t encode_open(std::span<std::byte> out, std::uint32_t stream_id, const OpenFields& open) noexcept {
  if (control_rules::check_open(open) != ControlError::kOk ||
      !store_header(out, ControlKind::kOpen, stream_id, kOpenBytes)) {
    return 0;
  }
  store<std::uint64_t>(out, layout::open::kTopicId, open.topic_id);
  store<std::uint64_t>(out, layout::open::kTypeHash, open.type_hash);
  store<std::uint32_t>(out, layout::open::kWriterId, open.writer_id);
  store<std::uint32_t>(out, layout::open::kLargestMessageBytes, open.largest_message_bytes);
  store<std::uint64_t>(out, layout::open::kBlockTimeoutNs, open.block_timeout_ns);
  store<std::uint8_t>(out, layout::open::kReliability, static_cast<std::uint8_t>(open.reliability));
  store<std::uint8_t>(out, layout::open::kOverflow, static_cast<std::uint8_t>(open.overflow));
  store<std::uint16_t>(out, layout::open::kReserved16, 0);
  store<std::uint32_t>(out, layout::open::kReserved32, 0);
  return kOpenBytes;
}

std::size_t encode_close(std::span<std::byte> out, std::uint32_t stream_id) noexcept {
  return store_header(out, ControlKind::kClose, stream_id, kCloseBytes) ? kCloseBytes : 0;
}

std::size_t encode_want(std::span<std::byte> out, std::uint32_t stream_id, std::uint32_t messages_waiting) noexcept {
  if (!store_header(out, ControlKind::kWant, stream_id, kWantBytes)) {
    return 0;
  }
  store<std::uint32_t>(out, layout::want::kMessagesWaiting, messages_waiting);
  store<std::uint32_t>(out, layout::want::kReserved, 0);
  return kWantBytes;
}

std::size_t encode_grant(std::span<std::byte> out, std::uint32_t stream_id, std::span<const GrantEntry> grants,
                         const PeerRegion& region) noexcept {
  if (grants.size() > kMaxGrantsPerMessage ||
      control_rules::check_grant_count(static_cast<std::uint32_t>(grants.size())) != ControlError::kOk) {
    return 0;
  }
  for (const GrantEntry& g : grants) {
    if (control_rules::check_grant(g, region) != ControlError::kOk) {
      return 0;
    }
  }
  const std::size_t bytes = kGrantHeaderBytes + grants.size() * kGrantEntryBytes;
  if (!store_header(out, ControlKind::kGrant, stream_id, bytes)) {
    return 0;
  }
  store<std::uint32_t>(out, layout::grant::kGrantCount, static_cast<std::uint32_t>(grants.size()));
  store<std::uint32_t>(out, layout::grant::kReserved, 0);
  for (std::size_t i = 0; i < grants.size(); ++i) {
    const std::span<std::byte> e = out.subspan(kGrantHeaderBytes + i * kGrantEntryBytes, kGrantEntryBytes);
    store<std::uint64_t>(e, layout::grant::kAddress, grants[i].address);
    store<std::uint32_t>(e, layout::grant::kCapacityBytes, grants[i].capacity_bytes);
    store<std::uint32_t>(e, layout::grant::kSlot, grants[i].slot);
    store<std::uint8_t>(e, layout::grant::kSizeClass, grants[i].size_class);
    store<std::uint8_t>(e, layout::grant::kReserved8, 0);
    store<std::uint16_t>(e, layout::grant::kReserved16, 0);
    store<std::uint32_t>(e, layout::grant::kReserved32, 0);
  }
  return bytes;
}

}  // namespace axon::rdma
