#include "transports/udp/cipher_arena.hpp"

#include <new>
#include <vector>

namespace axon::udp {

std::span<std::byte> thread_cipher_arena() noexcept {
  thread_local std::vector<std::byte> arena;
  if (arena.empty()) {
    try {
      arena.resize(kCipherArenaBytes);
    } catch (const std::bad_alloc&) {
      return {};  // the caller sends nothing rather than anything in clear
    }
  }
  return arena;
}

}  // namespace axon::udp
