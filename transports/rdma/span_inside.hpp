// The one containment check of the RDMA layer: whether a span a peer names
// (a granted chunk, a write's target) lies inside a registered region.
#pragma once

#include <cstdint>

namespace axon::rdma {

/// Whether [address, address + bytes) lies inside [base, base + length),
/// without overflow whatever the operands (they may come from a peer).
[[nodiscard]] constexpr bool span_inside(std::uint64_t base, std::uint64_t length, std::uint64_t address,
                                         std::uint64_t bytes) noexcept {
  return address >= base && bytes <= length && address - base <= length - bytes;
}

}  // namespace axon::rdma
