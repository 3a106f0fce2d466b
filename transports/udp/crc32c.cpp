#include "transports/udp/crc32c.hpp"

#include <array>
#include <cstring>

namespace axon::udp {
namespace {

constexpr std::uint32_t kPolynomial = 0x82F63B78U;  // Castagnoli, bit-reversed.

constexpr std::array<std::uint32_t, 256> make_table() noexcept {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 1U) != 0 ? (crc >> 1) ^ kPolynomial : crc >> 1;
    }
    table[i] = crc;
  }
  return table;
}

constexpr std::array<std::uint32_t, 256> kTable = make_table();

std::uint32_t crc32c_table(const std::byte* data, std::size_t size, std::uint32_t crc) noexcept {
  for (std::size_t i = 0; i < size; ++i) {
    crc = kTable[(crc ^ static_cast<std::uint32_t>(data[i])) & 0xFFU] ^ (crc >> 8);
  }
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(const std::byte* data, std::size_t size,
                                                             std::uint32_t crc) noexcept {
  std::uint64_t crc64 = crc;
  while (size >= 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, data, sizeof(word));  // unaligned load; little-endian host
    crc64 = __builtin_ia32_crc32di(crc64, word);
    data += 8;
    size -= 8;
  }
  auto crc32 = static_cast<std::uint32_t>(crc64);
  for (std::size_t i = 0; i < size; ++i) {
    crc32 = __builtin_ia32_crc32qi(crc32, static_cast<unsigned char>(data[i]));
  }
  return crc32;
}

bool has_sse42() noexcept {
  static const bool kHas = __builtin_cpu_supports("sse4.2") != 0;
  return kHas;
}
#endif

}  // namespace

std::uint32_t crc32c(std::span<const std::byte> bytes, std::uint32_t crc) noexcept {
  crc = ~crc;
#if defined(__x86_64__)
  if (has_sse42()) {
    return ~crc32c_sse42(bytes.data(), bytes.size(), crc);
  }
#endif
  return ~crc32c_table(bytes.data(), bytes.size(), crc);
}

}  // namespace axon::udp
