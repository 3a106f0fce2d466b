// What the node tests in the guest share (node_data_test.cpp,
// node_mixed_test.cpp): a 2 KiB raw message whose bytes derive from its
// sequence number, the environment the peer processes read, and a polling wait.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

namespace axon::test {

inline std::string env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread starts
  return value == nullptr ? std::string() : std::string(value);
}

/// A 2 KiB raw message: its sequence number, and every byte after it derived from it.
struct Block {
  std::uint64_t sequence = 0;
  std::array<std::uint8_t, 2040> bytes{};
};
constexpr std::uint8_t byte_of(std::uint64_t sequence, std::size_t i) noexcept {
  return static_cast<std::uint8_t>((sequence * 131 + i) % 251);
}
inline void fill(Block& b, std::uint64_t sequence) noexcept {
  b.sequence = sequence;
  for (std::size_t i = 0; i < b.bytes.size(); ++i) {
    b.bytes[i] = byte_of(sequence, i);
  }
}
inline bool intact(const Block& b) noexcept {
  for (std::size_t i = 0; i < b.bytes.size(); ++i) {
    if (b.bytes[i] != byte_of(b.sequence, i)) {
      return false;
    }
  }
  return true;
}

/// Polls `done` every 5 ms until it holds (true) or `timeout` passed (false).
template <class Done>
bool eventually(std::chrono::milliseconds timeout, Done done) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace axon::test
