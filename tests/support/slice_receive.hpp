// Receiving what axon_slice_peer publishes (tests/support/slice_peer.cpp):
// one message per entry of a list of sizes, each checked for its sequence,
// its element count and every element's value (slice_patterns.hpp).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/slice_patterns.hpp"

namespace axon::test {

/// `sizes` as the peer's sizes= argument ("0,1,1000").
inline std::string join(const std::vector<std::size_t>& sizes) {
  std::string out;
  for (const std::size_t n : sizes) {
    out += (out.empty() ? "" : ",") + std::to_string(n);
  }
  return out;
}

/// Takes one message per entry of `sizes` (`timeout` at most) and checks
/// each, then hands its elements to `also` (more checks); the number taken.
template <class T, class Element = typename Serializer<T>::Element, class Also>
std::size_t receive_sizes(Subscriber<T>& sub, const std::vector<std::size_t>& sizes, std::chrono::milliseconds timeout,
                          Also&& also) {
  std::size_t received = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (received < sizes.size() && std::chrono::steady_clock::now() < deadline) {
    auto sample = sub.take();
    if (!sample) {
      EXPECT_FALSE(sample.failed()) << sample.error().message();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    const std::uint64_t sequence = ++received;
    EXPECT_EQ(sample.value().info().sequence, sequence);
    const auto elements = std::span(reinterpret_cast<const Element*>(sample->data()), sample->size());
    EXPECT_EQ(elements.size(), sizes[sequence - 1]) << "message " << sequence;
    EXPECT_EQ(first_wrong_element(elements, sequence), elements.size()) << "message " << sequence;
    also(elements);
  }
  return received;
}

template <class T>
std::size_t receive_sizes(Subscriber<T>& sub, const std::vector<std::size_t>& sizes,
                          std::chrono::milliseconds timeout) {
  return receive_sizes(sub, sizes, timeout, [](auto /*elements*/) {});
}

/// Takes one Bytes message per entry of `sizes` (`timeout` at most), each
/// filled as a Slice<uint8_t> would be, and checks it; the number taken.
inline std::size_t receive_bytes(Subscriber<Bytes>& sub, const std::vector<std::size_t>& sizes,
                                 std::chrono::milliseconds timeout) {
  std::size_t received = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (received < sizes.size() && std::chrono::steady_clock::now() < deadline) {
    if (auto sample = sub.take()) {
      ++received;
      const auto bytes = std::span(reinterpret_cast<const std::uint8_t*>(sample->data()), sample->size());
      EXPECT_EQ(bytes.size(), sizes[received - 1]);
      EXPECT_EQ(first_wrong_element(bytes, received), bytes.size());
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  return received;
}

}  // namespace axon::test
