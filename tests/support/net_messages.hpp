// Messages of the multi-host tests (axon_net_peer): raw structs of a fixed
// size whose every body byte follows from the header, plus a checksum, so a
// receiver notices a torn, mixed or foreign message wherever it went wrong.
#pragma once

#include <cstddef>
#include <cstdint>

namespace axon::test {

struct NetMessageHeader {
  std::uint64_t sequence = 0;   ///< 1, 2, ... per publisher.
  std::uint64_t checksum = 0;   ///< net_checksum() of header fields and body.
  std::uint32_t bytes = 0;      ///< sizeof the whole message.
  std::uint32_t publisher = 0;  ///< Random per publisher process.
  std::uint64_t reserved = 0;
};
static_assert(sizeof(NetMessageHeader) == 32);

/// A message of exactly `kBytes` bytes. No member initializers on the body:
/// loan() default-constructs in place, and zeroing 4 MiB would be wasted.
inline constexpr std::size_t kNetHeaderBytes = sizeof(NetMessageHeader);

template <std::size_t kBytes>
struct NetMessage {
  static_assert(kBytes > kNetHeaderBytes && kBytes % 8 == 0);
  static constexpr std::size_t kWords = (kBytes - kNetHeaderBytes) / 8;
  NetMessageHeader header;
  std::uint64_t body[kWords];
};

/// Body word `i` of message `sequence` of `publisher` (splitmix64).
inline std::uint64_t net_body_word(std::uint32_t publisher, std::uint64_t sequence, std::size_t i) noexcept {
  std::uint64_t z = (std::uint64_t{publisher} << 40U) ^ (sequence << 20U) ^ i;
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

/// Folds the header fields and every body word (position-dependent).
template <std::size_t kBytes>
std::uint64_t net_checksum(const NetMessage<kBytes>& m) noexcept {
  std::uint64_t sum =
      m.header.sequence * 0x100000001B3ULL ^ m.header.bytes ^ (std::uint64_t{m.header.publisher} << 32U);
  for (std::size_t i = 0; i < NetMessage<kBytes>::kWords; ++i) {
    sum = (sum ^ m.body[i]) * 0x100000001B3ULL + i;
  }
  return sum;
}

template <std::size_t kBytes>
void fill_net_message(NetMessage<kBytes>& m, std::uint32_t publisher, std::uint64_t sequence) noexcept {
  m.header.sequence = sequence;
  m.header.bytes = static_cast<std::uint32_t>(kBytes);
  m.header.publisher = publisher;
  m.header.reserved = 0;
  for (std::size_t i = 0; i < NetMessage<kBytes>::kWords; ++i) {
    m.body[i] = net_body_word(publisher, sequence, i);
  }
  m.header.checksum = net_checksum(m);
}

/// Whether `m` is exactly what fill_net_message() wrote for its header.
template <std::size_t kBytes>
bool net_message_intact(const NetMessage<kBytes>& m) noexcept {
  if (m.header.bytes != kBytes || m.header.sequence == 0 || m.header.reserved != 0) {
    return false;
  }
  for (std::size_t i = 0; i < NetMessage<kBytes>::kWords; ++i) {
    if (m.body[i] != net_body_word(m.header.publisher, m.header.sequence, i)) {
      return false;
    }
  }
  return m.header.checksum == net_checksum(m);
}

/// Calls `f.template operator()<NetMessage<N>>()` for the message of `bytes`;
/// false when there is none (sizes: 64 B, 2 KiB, 64 KiB, 1 MiB, 4 MiB).
template <class F>
bool with_net_message(std::size_t bytes, F&& f) {
  switch (bytes) {
    case 64: f.template operator()<NetMessage<64>>(); return true;
    case 2048: f.template operator()<NetMessage<2048>>(); return true;
    case 65536: f.template operator()<NetMessage<65536>>(); return true;
    case 1U << 20U: f.template operator()<NetMessage<(1U << 20U)>>(); return true;
    case 4U << 20U: f.template operator()<NetMessage<(4U << 20U)>>(); return true;
    default: return false;
  }
}

}  // namespace axon::test
