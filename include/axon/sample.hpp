// Sample<T>: a received message, read in place in transport memory.
#pragma once

#include <memory>
#include <new>
#include <utility>

#include "axon/transport.hpp"

namespace axon {

template <class T>
class Subscriber;

/// Move-only, read-only view of a message. The memory goes back to its
/// publisher's pool when the last subscriber drops its sample. May be moved
/// to and dropped on another thread.
template <class T>
class Sample {
 public:
  Sample(Sample&& other) noexcept
      : port_(std::move(other.port_)), chunk_(std::exchange(other.chunk_, ReceivedChunk{})) {}
  Sample& operator=(Sample&& other) noexcept {
    if (this != &other) {
      reset();
      port_ = std::move(other.port_);
      chunk_ = std::exchange(other.chunk_, ReceivedChunk{});
    }
    return *this;
  }
  Sample(const Sample&) = delete;
  Sample& operator=(const Sample&) = delete;
  ~Sample() { reset(); }

  const T& operator*() const noexcept { return *value(); }
  const T* operator->() const noexcept { return value(); }
  const T* value() const noexcept { return std::launder(reinterpret_cast<const T*>(chunk_.payload)); }
  /// Sequence number, publish time, publisher and size of this message.
  [[nodiscard]] const SampleInfo& info() const noexcept { return chunk_.info; }
  /// Address of the payload (it lies in the publisher's shared memory).
  [[nodiscard]] const void* data() const noexcept { return chunk_.payload; }

 private:
  friend class Subscriber<T>;
  Sample(std::shared_ptr<SubscriberPort> port, const ReceivedChunk& chunk) noexcept
      : port_(std::move(port)), chunk_(chunk) {}
  void reset() noexcept {
    if (chunk_.handle != nullptr) {
      port_->release(chunk_);
      chunk_ = ReceivedChunk{};
    }
    port_.reset();
  }

  std::shared_ptr<SubscriberPort> port_;
  ReceivedChunk chunk_;
};

}  // namespace axon
