// The key a domain's datagrams are authenticated with: 32 bytes read from a
// file only its owner may read (docs/design/udp.md, "Authenticated datagrams").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "axon/result.hpp"

namespace axon::udp {

inline constexpr std::size_t kKeyBytes = 32;

/// A key and the one-byte id that tells receivers which key sealed a
/// datagram (the first byte of its SHA-256; two keys may share it, then the
/// receiver tries both).
struct DatagramKey {
  std::array<std::byte, kKeyBytes> bytes{};
  std::uint8_t id = 0;
};

/// A key from `bytes` (the id computed).
[[nodiscard]] Result<DatagramKey> make_datagram_key(const std::array<std::byte, kKeyBytes>& bytes);

/// Reads `path`: 32 raw bytes, or 64 hex digits (a trailing newline allowed).
/// Refused: a file group or others may access (mode & 077), a file another
/// user owns, a missing or unreadable file, any other length. `what` names
/// the config key in the messages ("udp security key_file").
[[nodiscard]] Result<DatagramKey> read_key_file(const std::string& path, const std::string& what);

}  // namespace axon::udp
