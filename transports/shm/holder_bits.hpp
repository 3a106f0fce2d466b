// Where a connection's bit lives: in a chunk's holder ledger (ChunkHeader) and
// in a publisher block's connection masks, both laid out as kHolderWords
// 64-bit words. Word 0 holds connections 0..60 next to the loan, history and
// network bits, so a publisher with up to 61 subscribers touches only it;
// words 1 and 2 hold connections 61..188.
#pragma once

#include <array>
#include <cstdint>

#include "transports/shm/shm_constants.hpp"

namespace axon::shm {

/// Connections whose bit is in word 0 (bits 0..60).
inline constexpr std::uint32_t kNarrowConnections = 61;
inline constexpr std::uint32_t kHolderWords = 3;
static_assert(kMaxSubscribersPerPublisher == kNarrowConnections + (kHolderWords - 1) * 64,
              "every connection has a bit in one of the ledger's words");

/// One connection's bit: its word (0..kHolderWords-1) and its mask there.
struct HolderBit {
  std::uint32_t word = 0;
  std::uint64_t mask = 0;
};

/// The bit of connection `bit` (< kMaxSubscribersPerPublisher: the caller
/// checked it, it may come from another process).
constexpr HolderBit holder_bit(std::uint32_t bit) noexcept {
  if (bit < kNarrowConnections) {
    return {0, std::uint64_t{1} << bit};
  }
  const std::uint32_t wide = bit - kNarrowConnections;
  return {1 + wide / 64, std::uint64_t{1} << (wide % 64)};
}

/// The connection whose bit is bit `index` of word `word`.
constexpr std::uint32_t connection_bit(std::uint32_t word, std::uint32_t index) noexcept {
  return word == 0 ? index : kNarrowConnections + (word - 1) * 64 + index;
}

/// The bits of each word a connection may own: a stray bit above them
/// (another process writes these words) never becomes a loan or history bit.
inline constexpr std::array<std::uint64_t, kHolderWords> kConnectionBitsOfWord = {
    (std::uint64_t{1} << kNarrowConnections) - 1, ~std::uint64_t{0}, ~std::uint64_t{0}};

/// A set of connection bits in the process's own memory (publish()'s
/// bookkeeping, snapshots of a block's masks).
struct ConnectionSet {
  std::array<std::uint64_t, kHolderWords> words{};

  [[nodiscard]] bool any() const noexcept { return (words[0] | words[1] | words[2]) != 0; }
  [[nodiscard]] bool any_wide() const noexcept { return (words[1] | words[2]) != 0; }
  void add(HolderBit b) noexcept { words[b.word] |= b.mask; }
  void remove(HolderBit b) noexcept { words[b.word] &= ~b.mask; }
  [[nodiscard]] std::uint32_t count() const noexcept {
    return static_cast<std::uint32_t>(__builtin_popcountll(words[0]) + __builtin_popcountll(words[1]) +
                                      __builtin_popcountll(words[2]));
  }
  /// This set without the bits of `other`.
  [[nodiscard]] ConnectionSet minus(const ConnectionSet& other) const noexcept {
    return {{words[0] & ~other.words[0], words[1] & ~other.words[1], words[2] & ~other.words[2]}};
  }
  /// Calls `f(bit)` for each connection bit, lowest first.
  template <class F>
  void for_each(F&& f) const noexcept {
    for (std::uint32_t w = 0; w < kHolderWords; ++w) {
      for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
        f(connection_bit(w, static_cast<std::uint32_t>(__builtin_ctzll(bits))));
      }
    }
  }
};

}  // namespace axon::shm
