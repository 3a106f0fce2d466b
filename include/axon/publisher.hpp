// Publisher<T>: sends messages of type T on one topic.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "axon/loan.hpp"
#include "axon/result.hpp"
#include "axon/transport.hpp"

namespace axon {

/// Thread safety: one thread at a time (create one publisher per thread).
/// loan() and publish() do not allocate, lock or make system calls.
template <class T>
class Publisher {
  static_assert(std::is_trivially_copyable_v<T>,
                "axon::Publisher<T> needs a trivially copyable T (a fixed-size struct without "
                "pointers, std::string or std::vector)");

 public:
  Publisher(std::shared_ptr<PublisherPort> port, std::string topic) noexcept
      : port_(std::move(port)), topic_(std::move(topic)) {}

  /// Memory for one message inside shared memory. kPoolExhausted when every
  /// chunk is in use (an outcome: drop the message or retry later).
  [[nodiscard]] Result<Loan<T>> loan() noexcept {
    auto chunk = port_->loan(sizeof(T));
    if (!chunk) {
      return chunk.error();
    }
    return Loan<T>(port_, *chunk);
  }

  /// Sends the loaned message to every subscriber without copying it.
  [[nodiscard]] Result<PublishStatus> publish(Loan<T>&& loan) noexcept {
    return port_->publish(loan.release(), sizeof(T));
  }

  /// Convenience: copies `value` into a loan and publishes it.
  [[nodiscard]] Result<PublishStatus> publish(const T& value) noexcept {
    auto chunk = port_->loan(sizeof(T));
    if (!chunk) {
      return chunk.error();
    }
    std::memcpy(chunk->payload, &value, sizeof(T));
    return port_->publish(*chunk, sizeof(T));
  }

  /// Subscribers connected now.
  [[nodiscard]] std::uint32_t subscriber_count() const noexcept { return port_->subscriber_count(); }
  [[nodiscard]] const std::string& topic() const noexcept { return topic_; }

 private:
  std::shared_ptr<PublisherPort> port_;
  std::string topic_;
};

}  // namespace axon
