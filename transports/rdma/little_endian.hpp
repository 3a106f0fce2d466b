// Little-endian loads and stores of unsigned integers, byte by byte: no
// alignment or host-order assumptions. The caller has checked that the field
// lies inside the span (these do not).
//
// Thread safety: pure functions. No allocation, no system call (data path).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace axon::rdma::le {

template <class T>
[[nodiscard]] constexpr T load(std::span<const std::byte> in, std::size_t offset) noexcept {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    value = static_cast<T>(value | (static_cast<T>(std::to_integer<std::uint8_t>(in[offset + i])) << (8 * i)));
  }
  return value;
}

template <class T>
constexpr void store(std::span<std::byte> out, std::size_t offset, T value) noexcept {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out[offset + i] = static_cast<std::byte>((value >> (8 * i)) & 0xFFU);
  }
}

}  // namespace axon::rdma::le
