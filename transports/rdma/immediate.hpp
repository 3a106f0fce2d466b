// The 32-bit immediate value of a message's RDMA WRITE WITH IMMEDIATE: which
// granted chunk the write filled and how many bytes it wrote
// (docs/design/rdma-transport.md, "The immediate value").
//
//   [size class : 4][grant slot : 28 - L][length : L]
//
// L is the bit width of the class's payload capacity, so every length
// 0..capacity fits; the slot counts the chunks of that class granted to one
// queue pair at once (16 MiB: L = 25, 8 slots; 256 B: L = 9, 524288 slots).
// A class of 256 MiB or more leaves no slot: it cannot be received by RDMA.
// The value is in host order here; the work request carries it big-endian
// (ibv_send_wr::imm_data, htonl).
//
// Thread safety: pure functions. No allocation, no system call (data path).
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <span>

#include "transports/shm/shm_constants.hpp"

namespace axon::rdma {

inline constexpr std::uint32_t kClassBits = 4;
inline constexpr std::uint32_t kSlotAndLengthBits = 32 - kClassBits;
static_assert(shm::kMaxSizeClasses <= (1U << kClassBits), "every chunk class has a number in the immediate");

/// How a class's 28 bits split between grant slot and length.
struct ImmediateSplit {
  std::uint32_t length_bits = 0;
  std::uint32_t slot_bits = 0;
};

/// The split for a class of `capacity_bytes`; nullopt when the class is too
/// large for any slot (256 MiB or more).
[[nodiscard]] constexpr std::optional<ImmediateSplit> immediate_split(std::uint32_t capacity_bytes) noexcept {
  const auto length_bits = static_cast<std::uint32_t>(std::bit_width(capacity_bytes));
  if (length_bits > kSlotAndLengthBits) {
    return std::nullopt;
  }
  return ImmediateSplit{.length_bits = length_bits, .slot_bits = kSlotAndLengthBits - length_bits};
}

/// Grants of a class of `capacity_bytes` one queue pair may have out at once
/// (0: the class cannot be received by RDMA).
[[nodiscard]] constexpr std::uint32_t max_grant_slots(std::uint32_t capacity_bytes) noexcept {
  const auto split = immediate_split(capacity_bytes);
  return split ? std::uint32_t{1} << split->slot_bits : 0;
}

/// What an immediate says.
struct ImmediateFields {
  std::uint32_t size_class = 0;
  std::uint32_t slot = 0;
  std::uint32_t length = 0;
  friend constexpr bool operator==(const ImmediateFields&, const ImmediateFields&) = default;
};

/// The immediate for `fields` in a class of `capacity_bytes`; nullopt when a
/// field does not fit (class number, slot beyond max_grant_slots(), length
/// beyond the capacity).
[[nodiscard]] constexpr std::optional<std::uint32_t> encode_immediate(const ImmediateFields& fields,
                                                                      std::uint32_t capacity_bytes) noexcept {
  const auto split = immediate_split(capacity_bytes);
  if (!split || fields.size_class >= (1U << kClassBits) || fields.slot >= (std::uint32_t{1} << split->slot_bits) ||
      fields.length > capacity_bytes) {
    return std::nullopt;
  }
  return fields.size_class << kSlotAndLengthBits | fields.slot << split->length_bits | fields.length;
}

/// What `immediate` (from another host: untrusted) says, given the payload
/// capacity of each of the receiving pool's classes; nullopt when it names no
/// class of the pool, a class that cannot be received, or a length beyond
/// the class's capacity. Whether the slot is granted now is the caller's
/// (its grant table).
[[nodiscard]] constexpr std::optional<ImmediateFields> decode_immediate(
    std::uint32_t immediate, std::span<const std::uint32_t> class_capacities) noexcept {
  const std::uint32_t size_class = immediate >> kSlotAndLengthBits;
  if (size_class >= class_capacities.size()) {
    return std::nullopt;
  }
  const std::uint32_t capacity = class_capacities[size_class];
  const auto split = immediate_split(capacity);
  if (!split) {
    return std::nullopt;
  }
  const std::uint32_t rest = immediate & ((std::uint32_t{1} << kSlotAndLengthBits) - 1);
  const std::uint32_t length = rest & ((std::uint32_t{1} << split->length_bits) - 1);
  if (length > capacity) {
    return std::nullopt;
  }
  return ImmediateFields{.size_class = size_class, .slot = rest >> split->length_bits, .length = length};
}

}  // namespace axon::rdma
