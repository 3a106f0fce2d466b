// A DestinationProvider for reassembly tests, and test messages.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "transports/udp/reassembly.hpp"

namespace axon::udp::test {

// Hands out heap buffers and remembers which are out: a released or taken
// buffer is gone, so `outstanding()` shows leaks and double releases.
class TestProvider final : public DestinationProvider {
 public:
  std::optional<Destination> acquire(const MessageKey& /*key*/, std::uint64_t /*topic_id*/,
                                     std::uint32_t total_bytes) noexcept override {
    ++acquired;
    if (refuse) {
      return std::nullopt;
    }
    const std::uint64_t token = next_token_++;
    auto& buffer = buffers_[token];
    buffer.assign(short_by < total_bytes ? total_bytes - short_by : 0, std::byte{0xEE});
    return Destination{.bytes = buffer, .token = token};
  }
  void release(const MessageKey& /*key*/, const Destination& destination) noexcept override {
    ++released;
    EXPECT_EQ(buffers_.erase(destination.token), 1U) << "released twice or never acquired";
  }
  // The caller's side of a completed message.
  std::vector<std::byte> take(const CompletedMessage& message) {
    auto it = buffers_.find(message.destination.token);
    EXPECT_NE(it, buffers_.end());
    std::vector<std::byte> out = std::move(it->second);
    buffers_.erase(it);
    return out;
  }
  [[nodiscard]] std::size_t outstanding() const { return buffers_.size(); }

  bool refuse = false;
  std::uint32_t short_by = 0;
  std::size_t acquired = 0;
  std::size_t released = 0;

 private:
  std::map<std::uint64_t, std::vector<std::byte>> buffers_;
  std::uint64_t next_token_ = 1;
};

inline std::vector<std::byte> message_of(std::size_t size, std::uint32_t seed = 1) {
  std::vector<std::byte> message(size);
  std::uint32_t x = seed;
  for (auto& b : message) {
    x = x * 1664525U + 1013904223U;
    b = static_cast<std::byte>(x >> 24);
  }
  return message;
}

}  // namespace axon::udp::test
