// CRC-32 two ways. Slicing-by-8: table[k][b] is the CRC of byte b followed by k zero bytes, so eight table
// lookups fold eight input bytes at once (about 1.5 bytes a cycle). On x86-64 with PCLMULQDQ (checked at run
// time), blocks of 64 bytes and more are folded with carry-less multiplies instead (Intel's "Fast CRC Computation
// for Generic Polynomials Using PCLMULQDQ", 2009; the constants of the Linux kernel's crc32-pclmul and
// Chromium's zlib for the reflected polynomial 0xEDB88320): about ten times faster, which is what lets an
// uncompressed recording keep up with the disk (docs/performance.md, "Recording (issue 18)").
#include "src/tools/mcap/crc32.hpp"

#include <array>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

#if defined(__x86_64__)
// The functions that use the instructions are compiled for them (the rest of the build is not): a lambda would
// not inherit the attribute.
#define AXON_MCAP_PCLMUL __attribute__((target("pclmul,sse4.1")))

AXON_MCAP_PCLMUL __m128i load(const std::uint8_t* at) noexcept {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
}

/// x carried 128 bits (or 512, by k) forward and added to `next`.
AXON_MCAP_PCLMUL __m128i fold(__m128i x, __m128i k, __m128i next) noexcept {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x11), _mm_clmulepi64_si128(x, k, 0x00)), next);
}

/// Folds `n` bytes (n >= 64, a multiple of 16) into the running (inverted) CRC `crc`.
AXON_MCAP_PCLMUL std::uint32_t fold_pclmul(const std::uint8_t* p, std::size_t n, std::uint32_t crc) noexcept {
  alignas(16) static constexpr std::uint64_t kK1K2[] = {0x0154442bd4, 0x01c6e41596};  // fold by 4 x 128 bits
  alignas(16) static constexpr std::uint64_t kK3K4[] = {0x01751997d0, 0x00ccaa009e};  // fold by 128 bits
  alignas(16) static constexpr std::uint64_t kK5K0[] = {0x0163cd6124, 0x0000000000};  // 64 to 32 bits
  alignas(16) static constexpr std::uint64_t kPoly[] = {0x01db710641, 0x01f7011641};  // Barrett: P(x), mu
  __m128i x1 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(crc)));
  __m128i x2 = load(p + 16);
  __m128i x3 = load(p + 32);
  __m128i x4 = load(p + 48);
  p += 64;
  n -= 64;
  __m128i k = _mm_load_si128(reinterpret_cast<const __m128i*>(kK1K2));
  for (; n >= 64; p += 64, n -= 64) {  // four lanes of 128 bits, each folded 512 bits forward
    x1 = fold(x1, k, load(p));
    x2 = fold(x2, k, load(p + 16));
    x3 = fold(x3, k, load(p + 32));
    x4 = fold(x4, k, load(p + 48));
  }
  k = _mm_load_si128(reinterpret_cast<const __m128i*>(kK3K4));
  x1 = fold(x1, k, x2);  // the four lanes into one
  x1 = fold(x1, k, x3);
  x1 = fold(x1, k, x4);
  for (; n >= 16; p += 16, n -= 16) {
    x1 = fold(x1, k, load(p));
  }
  // 128 bits to 64, then to 32 (k5), then the Barrett reduction to the CRC.
  const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);
  x2 = _mm_clmulepi64_si128(x1, k, 0x10);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
  k = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(kK5K0));
  x2 = _mm_srli_si128(x1, 4);
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k, 0x00), x2);
  k = _mm_load_si128(reinterpret_cast<const __m128i*>(kPoly));
  x2 = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k, 0x10), mask32);
  x2 = _mm_clmulepi64_si128(x2, k, 0x00);
  x1 = _mm_xor_si128(x1, x2);
  return static_cast<std::uint32_t>(_mm_extract_epi32(x1, 1));
}

bool has_pclmul() noexcept {
  // __builtin_cpu_init first: this may run before the constructors that would otherwise have called it.
  static const bool kHas = (__builtin_cpu_init(), __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"));
  return kHas;
}
#endif

}  // namespace

void Crc32::update(std::span<const std::uint8_t> bytes) noexcept {
  std::uint32_t crc = state_;
  const std::uint8_t* p = bytes.data();
  std::size_t n = bytes.size();
#if defined(__x86_64__)
  if (n >= 64 && has_pclmul()) {
    const std::size_t folded = n & ~std::size_t{15};
    crc = fold_pclmul(p, folded, crc);
    p += folded;
    n -= folded;
  }
#endif
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

namespace {

/// a * b modulo the polynomial, in the reflected bit order (zlib's multmodp).
std::uint32_t multiply_mod_p(std::uint32_t a, std::uint32_t b) noexcept {
  std::uint32_t m = 1U << 31;
  std::uint32_t product = 0;
  for (;;) {
    if ((a & m) != 0) {
      product ^= b;
      if ((a & (m - 1)) == 0) {
        break;
      }
    }
    m >>= 1;
    b = (b & 1U) != 0 ? (b >> 1) ^ 0xEDB88320U : b >> 1;
  }
  return product;
}

}  // namespace

void Crc32::append(std::uint32_t crc, std::uint64_t length) noexcept {
  // value() * x^(8 * length) mod P, then the second CRC on top (zlib's crc32_combine64): x^(2^k) by squaring.
  std::uint32_t x_power = 1U << 30;  // x^1
  std::uint32_t shift = 1U << 31;    // x^0
  for (std::uint64_t n = length * 8; n != 0; n >>= 1) {
    if ((n & 1U) != 0) {
      shift = multiply_mod_p(x_power, shift);
    }
    x_power = multiply_mod_p(x_power, x_power);
  }
  state_ = (multiply_mod_p(shift, value()) ^ crc) ^ 0xFFFFFFFFU;
}

std::uint32_t crc32(std::span<const std::uint8_t> bytes) noexcept {
  Crc32 crc;
  crc.update(bytes);
  return crc.value();
}

}  // namespace axon::mcap
