// Slicing-by-8 CRC-32: table[k][b] is the CRC of byte b followed by k zero bytes, so eight table lookups
// fold eight input bytes at once.
#include "src/tools/mcap/crc32.hpp"

#include <array>

namespace axon::mcap {
namespace {

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 1U) != 0 ? (crc >> 1) ^ 0xEDB88320U : crc >> 1;
    }
    t[0][b] = crc;
  }
  for (std::uint32_t b = 0; b < 256; ++b) {
    for (std::size_t k = 1; k < 8; ++k) {
      t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFU];
    }
  }
  return t;
}

constexpr Tables kTables = make_tables();

}  // namespace

void Crc32::update(std::span<const std::uint8_t> bytes) noexcept {
  std::uint32_t crc = state_;
  const std::uint8_t* p = bytes.data();
  std::size_t n = bytes.size();
  while (n >= 8) {
    const std::uint32_t lo = crc ^ (static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
                                    static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24);
    crc = kTables[7][lo & 0xFFU] ^ kTables[6][(lo >> 8) & 0xFFU] ^ kTables[5][(lo >> 16) & 0xFFU] ^
          kTables[4][lo >> 24] ^ kTables[3][p[4]] ^ kTables[2][p[5]] ^ kTables[1][p[6]] ^ kTables[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) {
    crc = (crc >> 8) ^ kTables[0][(crc ^ *p++) & 0xFFU];
  }
  state_ = crc;
}

std::uint32_t crc32(std::span<const std::uint8_t> bytes) noexcept {
  Crc32 crc;
  crc.update(bytes);
  return crc.value();
}

}  // namespace axon::mcap
