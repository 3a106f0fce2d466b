// The rules of the control messages (control_message.hpp) that the parser
// (control_parse.cpp) and the encoders (control_encode.cpp) share, so that
// nothing is sent that the peer would refuse. Private to those two files.
#pragma once

#include <cstdint>
#include <limits>

#include "transports/rdma/control_message.hpp"
#include "transports/rdma/immediate.hpp"
#include "transports/rdma/span_inside.hpp"
#include "transports/shm/shm_constants.hpp"

namespace axon::rdma::control_rules {

inline ControlError check_open(const OpenFields& open) noexcept {
  if (static_cast<std::uint8_t>(open.reliability) > static_cast<std::uint8_t>(WireReliability::kReliable)) {
    return ControlError::kBadReliability;
  }
  if (static_cast<std::uint8_t>(open.overflow) > static_cast<std::uint8_t>(WireOverflow::kBlockPublisher)) {
    return ControlError::kBadOverflow;
  }
  // axon's block_timeout_ns is an int64_t.
  if (open.block_timeout_ns > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return ControlError::kBadBlockTimeout;
  }
  return ControlError::kOk;
}

inline ControlError check_grant_count(std::uint32_t count) noexcept {
  if (count == 0) {
    return ControlError::kZeroGrants;
  }
  return count > kMaxGrantsPerMessage ? ControlError::kTooManyGrants : ControlError::kOk;
}

// One grant: a class the immediate can name, a capacity with a slot bit, a
// slot the immediate can carry, and a chunk inside the receiver's region.
inline ControlError check_grant(const GrantEntry& g, const PeerRegion& region) noexcept {
  if (g.size_class >= shm::kMaxSizeClasses) {
    return ControlError::kBadSizeClass;
  }
  if (g.capacity_bytes == 0) {
    return ControlError::kZeroCapacity;
  }
  const std::uint32_t slots = max_grant_slots(g.capacity_bytes);
  if (slots == 0) {
    return ControlError::kCapacityTooLarge;
  }
  if (g.slot >= slots) {
    return ControlError::kSlotOutOfRange;
  }
  if (g.address > std::numeric_limits<std::uint64_t>::max() - g.capacity_bytes) {
    return ControlError::kAddressOverflow;
  }
  // span_inside() compares distances, so region.base + region.length need not
  // even fit (the connection refuses that, but this check does not rely on it).
  if (!span_inside(region.base, region.length, g.address, g.capacity_bytes)) {
    return ControlError::kOutsideRegion;
  }
  return ControlError::kOk;
}

}  // namespace axon::rdma::control_rules
