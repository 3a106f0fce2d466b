// Messages the multi-process tests exchange; each carries a checksum so a
// receiver notices torn or foreign data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace axon::test {

struct TestMessage {
  static constexpr std::string_view kAxonTypeName = "axon_test::TestMessage";
  std::uint32_t publisher = 0;
  std::uint32_t reserved = 0;
  std::uint64_t sequence = 0;
  std::uint64_t checksum = 0;
  std::uint8_t body[232] = {};
};
static_assert(sizeof(TestMessage) == 256);

/// Another type, for mismatch tests.
struct OtherMessage {
  static constexpr std::string_view kAxonTypeName = "axon_test::OtherMessage";
  double value = 0;
};

inline std::uint64_t expected_checksum(std::uint32_t publisher, std::uint64_t sequence) {
  return (std::uint64_t{publisher} * 0x9E3779B97F4A7C15ULL) ^ (sequence * 0xC2B2AE3D27D4EB4FULL);
}

inline void fill(TestMessage& m, std::uint32_t publisher, std::uint64_t sequence) {
  m.publisher = publisher;
  m.sequence = sequence;
  m.checksum = expected_checksum(publisher, sequence);
  for (std::size_t i = 0; i < sizeof(m.body); ++i) {
    m.body[i] = static_cast<std::uint8_t>(sequence + i);
  }
}

inline bool intact(const TestMessage& m) {
  if (m.checksum != expected_checksum(m.publisher, m.sequence)) {
    return false;
  }
  for (std::size_t i = 0; i < sizeof(m.body); ++i) {
    if (m.body[i] != static_cast<std::uint8_t>(m.sequence + i)) {
      return false;
    }
  }
  return true;
}

}  // namespace axon::test
