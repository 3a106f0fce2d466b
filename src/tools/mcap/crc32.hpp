// CRC-32 as MCAP uses it (ISO-HDLC, zlib's crc32: reflected polynomial 0xEDB88320, initial and final value
// 0xFFFFFFFF), computed eight bytes at a time (slicing-by-8).
#pragma once

#include <cstdint>
#include <span>

namespace axon::mcap {

/// A running CRC: update() with each piece in order, value() at the end.
class Crc32 {
 public:
  void update(std::span<const std::uint8_t> bytes) noexcept;
  [[nodiscard]] std::uint32_t value() const noexcept { return state_ ^ 0xFFFFFFFFU; }
  /// As if the `length` bytes whose own CRC is `crc` had been update()d, without reading them again
  /// (zlib's crc32_combine; about 64 small steps per bit of `length`).
  void append(std::uint32_t crc, std::uint64_t length) noexcept;

 private:
  std::uint32_t state_ = 0xFFFFFFFFU;
};

/// The CRC of one buffer.
[[nodiscard]] std::uint32_t crc32(std::span<const std::uint8_t> bytes) noexcept;

}  // namespace axon::mcap
