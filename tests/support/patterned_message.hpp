// A large test message whose body carries a pattern of its sequence, so that a
// receiver can tell a torn, mixed-up or corrupt message from a whole one
// without comparing every byte: one byte every `Stride`, and the last byte.
// A test names its own type (the topic's type name) by deriving from it:
//   struct BigMessage : test::PatternedMessage<4U << 20U, 4096, 31> {
//     static constexpr std::string_view kAxonTypeName = "axon_test::BigMessage";
//   };
#pragma once

#include <cstddef>
#include <cstdint>

namespace axon::test {

/// Exactly `Bytes`; `Factor` varies the pattern between message types.
template <std::size_t Bytes, std::size_t Stride, std::uint64_t Factor>
struct PatternedMessage {
  static constexpr std::size_t kBytes = Bytes;
  std::uint64_t sequence = 0;
  std::uint8_t body[Bytes - sizeof(std::uint64_t)];
};

/// Writes the pattern of `sequence` into `m`.
template <std::size_t Bytes, std::size_t Stride, std::uint64_t Factor>
void fill(PatternedMessage<Bytes, Stride, Factor>& m, std::uint64_t sequence) {
  m.sequence = sequence;
  for (std::size_t i = 0; i < sizeof(m.body); i += Stride) {
    m.body[i] = static_cast<std::uint8_t>(sequence * Factor + i / Stride);
  }
  m.body[sizeof(m.body) - 1] = static_cast<std::uint8_t>(sequence);
}

/// Whether `m` carries the pattern fill() writes for its sequence.
template <std::size_t Bytes, std::size_t Stride, std::uint64_t Factor>
bool intact(const PatternedMessage<Bytes, Stride, Factor>& m) {
  for (std::size_t i = 0; i < sizeof(m.body); i += Stride) {
    if (m.body[i] != static_cast<std::uint8_t>(m.sequence * Factor + i / Stride)) {
      return false;
    }
  }
  return m.body[sizeof(m.body) - 1] == static_cast<std::uint8_t>(m.sequence);
}

}  // namespace axon::test
