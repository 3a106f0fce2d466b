// Loan<T>: a message being written directly in transport memory.
#pragma once

#include <memory>
#include <new>
#include <utility>

#include "axon/transport.hpp"

namespace axon {

template <class T>
class Publisher;

/// Move-only. Write the message through `*loan` or `loan->field`, then hand
/// it to Publisher::publish(); a loan dropped unpublished goes back to the
/// pool. Must be used by one thread at a time, like its publisher.
template <class T>
class Loan {
 public:
  Loan(Loan&& other) noexcept : port_(std::move(other.port_)), chunk_(std::exchange(other.chunk_, LoanedChunk{})) {}
  Loan& operator=(Loan&& other) noexcept {
    if (this != &other) {
      reset();
      port_ = std::move(other.port_);
      chunk_ = std::exchange(other.chunk_, LoanedChunk{});
    }
    return *this;
  }
  Loan(const Loan&) = delete;
  Loan& operator=(const Loan&) = delete;
  ~Loan() { reset(); }

  T& operator*() noexcept { return *value(); }
  T* operator->() noexcept { return value(); }
  /// The message in shared memory.
  T* value() noexcept { return std::launder(reinterpret_cast<T*>(chunk_.payload)); }

 private:
  friend class Publisher<T>;
  Loan(std::shared_ptr<PublisherPort> port, LoanedChunk chunk) noexcept : port_(std::move(port)), chunk_(chunk) {
    new (chunk_.payload) T;  // trivially copyable: default-initialized, no zeroing of large messages
  }
  LoanedChunk release() noexcept {
    port_.reset();
    return std::exchange(chunk_, LoanedChunk{});
  }
  void reset() noexcept {
    if (chunk_.handle != nullptr) {
      port_->discard(chunk_);
      chunk_ = LoanedChunk{};
    }
    port_.reset();
  }

  std::shared_ptr<PublisherPort> port_;
  LoanedChunk chunk_;
};

}  // namespace axon
