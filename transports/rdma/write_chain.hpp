// How a message larger than the port's largest message (ibv_port_attr::
// max_msg_sz: rxe 8 MiB, mlx5 1 GiB) is split into a chain of writes into
// the same granted chunk (docs/design/rdma-transport.md, "Messages above
// the port's largest message"): parts of max_msg_sz bytes each as plain
// RDMA_WRITEs, the rest as the WRITE_WITH_IMM that ends the chain.
//
// The chain is posted from fixed arrays on the stack, so its length is
// bounded: the largest message an immediate can name (256 MiB - 1,
// immediate.hpp) over the smallest max_msg_sz the transport supports (rxe's
// 8 MiB): 32 parts. A message that needs more is refused (a value).
//
// Thread safety: pure functions. No allocation (data path).
#pragma once

#include <cstdint>

#include "transports/rdma/immediate.hpp"

namespace axon::rdma {

/// The largest payload an immediate names: a class of 2^28 - 1 bytes (28
/// length bits, one slot).
inline constexpr std::uint32_t kLargestImmediateLength = (std::uint32_t{1} << kSlotAndLengthBits) - 1;
static_assert(max_grant_slots(kLargestImmediateLength) == 1 && max_grant_slots(kLargestImmediateLength + 1) == 0);
/// The smallest max_msg_sz a chain is sized for (rxe's, measured in the guest).
inline constexpr std::uint32_t kSmallestPortMaxMessageBytes = std::uint32_t{8} << 20;
inline constexpr std::uint32_t kMaxWriteChainParts =
    (kLargestImmediateLength + kSmallestPortMaxMessageBytes - 1) / kSmallestPortMaxMessageBytes;
static_assert(kMaxWriteChainParts == 32);

/// Writes a message of `length` bytes takes (a message of 0 bytes is one
/// WRITE_WITH_IMM of 0 bytes); 0 when it needs more than
/// kMaxWriteChainParts or `max_message_bytes` is 0.
[[nodiscard]] constexpr std::uint32_t write_chain_parts(std::uint32_t length,
                                                        std::uint32_t max_message_bytes) noexcept {
  if (max_message_bytes == 0) {
    return 0;
  }
  const std::uint64_t parts = length == 0 ? 1 : (std::uint64_t{length} + max_message_bytes - 1) / max_message_bytes;
  return parts <= kMaxWriteChainParts ? static_cast<std::uint32_t>(parts) : 0;
}

/// Part `index` of a chain of `parts` (write_chain_parts()): its offset
/// into the message and its length. Every part but the last is
/// `max_message_bytes` long.
struct WritePart {
  std::uint32_t offset = 0;
  std::uint32_t length = 0;
  friend constexpr bool operator==(const WritePart&, const WritePart&) = default;
};
[[nodiscard]] constexpr WritePart write_chain_part(std::uint32_t index, std::uint32_t parts, std::uint32_t length,
                                                   std::uint32_t max_message_bytes) noexcept {
  const std::uint32_t offset = index * max_message_bytes;
  return {.offset = offset, .length = index + 1 == parts ? length - offset : max_message_bytes};
}

/// The byte_len the receiver's WRITE_WITH_IMM completion reports for a
/// message of `length`: the last part's (the earlier parts complete nothing
/// on the receiver); 0 when the chain is refused.
[[nodiscard]] constexpr std::uint32_t write_chain_tail_bytes(std::uint32_t length,
                                                             std::uint32_t max_message_bytes) noexcept {
  const std::uint32_t parts = write_chain_parts(length, max_message_bytes);
  return parts == 0 ? 0 : write_chain_part(parts - 1, parts, length, max_message_bytes).length;
}

}  // namespace axon::rdma
