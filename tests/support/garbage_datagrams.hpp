// Hostile datagrams for the hardened-parser test across hosts: random bytes,
// empty and oversized datagrams, and well-formed axon HEARTBEATs (built from
// the wire format in docs/design/udp.md, not from axon's encoder) broken one
// rule at a time, plus intact ones from a sender nobody announced (spoofed).
// A receiver must refuse and count every one of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace axon::test {

struct GarbageDatagram {
  std::string kind;  ///< "random", "empty", "truncated", "bad-magic", ...
  std::vector<std::byte> bytes;
};

namespace detail {

inline void put_le(std::vector<std::byte>& out, std::size_t offset, std::uint64_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) {
    out[offset + i] = static_cast<std::byte>((value >> (8 * i)) & 0xFFU);
  }
}

/// A HEARTBEAT (type 2, 56 bytes) as the wire format says, without a checksum.
inline std::vector<std::byte> heartbeat(std::uint64_t sender_id) {
  std::vector<std::byte> d(56);
  put_le(d, 0, 0x554E5841, 4);  // magic "AXNU"
  put_le(d, 4, 1, 1);           // version
  put_le(d, 5, 2, 1);           // type HEARTBEAT
  put_le(d, 8, sender_id, 8);
  put_le(d, 20, d.size(), 4);  // datagram_bytes
  put_le(d, 24, 0x1234, 8);    // topic id
  put_le(d, 32, 1, 8);         // first sequence
  put_le(d, 40, 5, 8);         // last sequence
  put_le(d, 48, 1, 4);         // writer id
  return d;
}

}  // namespace detail

/// The whole set, in a fixed order; `seed` varies the random parts.
inline std::vector<GarbageDatagram> garbage_datagrams(std::uint32_t seed) {
  std::mt19937 random(seed);
  auto random_bytes = [&](std::size_t n) {
    std::vector<std::byte> bytes(n);
    for (auto& b : bytes) {
      b = static_cast<std::byte>(random() & 0xFFU);
    }
    return bytes;
  };
  const std::uint64_t stranger = (std::uint64_t{random()} << 32U) | random() | 1U;
  std::vector<GarbageDatagram> all;
  all.reserve(200);
  for (int i = 0; i < 40; ++i) {
    all.push_back({"random", random_bytes(1 + random() % 1400)});
  }
  for (int i = 0; i < 5; ++i) {
    all.push_back({"empty", {}});
  }
  for (int i = 0; i < 5; ++i) {
    all.push_back({"oversized", random_bytes(9000)});  // larger than any MTU-sized receive buffer
  }
  const std::vector<std::byte> valid = detail::heartbeat(stranger);
  for (std::size_t n = 1; n < valid.size(); ++n) {
    all.push_back({"truncated", std::vector<std::byte>(valid.begin(), valid.begin() + static_cast<long>(n))});
  }
  for (int i = 0; i < 20; ++i) {
    auto d = valid;
    d[3] = std::byte{'V'};
    all.push_back({"bad-magic", d});
  }
  for (int i = 0; i < 20; ++i) {
    auto d = valid;
    d[4] = std::byte{9};
    all.push_back({"bad-version", d});
  }
  for (int i = 0; i < 10; ++i) {
    auto d = valid;
    d[6] = std::byte{0x80};
    all.push_back({"unknown-flag", d});
  }
  for (int i = 0; i < 10; ++i) {
    auto d = valid;
    detail::put_le(d, 20, 1000, 4);
    all.push_back({"length-lie", d});
  }
  for (int i = 0; i < 20; ++i) {
    all.push_back({"spoofed", valid});
  }
  return all;
}

}  // namespace axon::test
