// CRC-32C (Castagnoli), the checksum of UDP datagrams that ask for one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace axon::udp {

/// Continues a CRC-32C over `bytes`. Start with `crc = 0`; feeding a buffer in
/// pieces gives the same value as feeding it at once. Uses the SSE4.2 crc32
/// instruction when the CPU has it, a table otherwise.
///
/// Thread safety: a pure function. Does not allocate.
[[nodiscard]] std::uint32_t crc32c(std::span<const std::byte> bytes, std::uint32_t crc = 0) noexcept;

}  // namespace axon::udp
