// A large test message whose body carries a pattern of its sequence, so that a
// receiver can tell a torn, mixed-up or corrupt message from a whole one
// without comparing every byte: one byte every `stride`, and the last byte.
#pragma once

#include <cstddef>
#include <cstdint>

namespace axon::test {

/// Writes the pattern of `sequence` into `m` (a struct with `sequence` and a
/// byte array `body`); `factor` varies the pattern between message types.
template <typename Message>
void fill_pattern(Message& m, std::uint64_t sequence, std::size_t stride, std::uint64_t factor) {
  m.sequence = sequence;
  for (std::size_t i = 0; i < sizeof(m.body); i += stride) {
    m.body[i] = static_cast<std::uint8_t>(sequence * factor + i / stride);
  }
  m.body[sizeof(m.body) - 1] = static_cast<std::uint8_t>(sequence);
}

/// Whether `m` carries the pattern fill_pattern() writes for its sequence.
template <typename Message>
bool pattern_intact(const Message& m, std::size_t stride, std::uint64_t factor) {
  for (std::size_t i = 0; i < sizeof(m.body); i += stride) {
    if (m.body[i] != static_cast<std::uint8_t>(m.sequence * factor + i / stride)) {
      return false;
    }
  }
  return m.body[sizeof(m.body) - 1] == static_cast<std::uint8_t>(m.sequence);
}

}  // namespace axon::test
