// Loan<T>: a message being written directly in transport memory. One
// message of a fixed-size type, or (Slice<E>, Bytes) a run-time number of
// elements.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <utility>

#include "axon/serializer.hpp"
#include "axon/transport.hpp"

namespace axon {

template <class T>
class Publisher;

/// Asks Publisher::loan(count, axon::kZeroed) for elements set to zero bytes
/// (a plain loan(count) leaves them as the chunk's last message left them).
struct Zeroed {
  explicit constexpr Zeroed() = default;
};
inline constexpr Zeroed kZeroed{};

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
  [[nodiscard]] static constexpr std::size_t payload_bytes() noexcept { return sizeof(T); }
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

/// Slices and bytes (detail::ElementMessage: Serializer<T>::kLoansElements): `size()` elements of
/// Serializer<T>::Element in shared memory, chosen at loan time. Write them
/// through `loan[i]`, `loan->data()`, a range loop or std::span algorithms;
/// publish() sends exactly those elements (all of them, even unwritten
/// ones). Move-only, one thread at a time, like the single-message loan.
template <class T>
requires detail::ElementMessage<T>
class Loan<T> {
 public:
  using Element = typename Serializer<T>::Element;

  Loan(Loan&& other) noexcept
      : port_(std::move(other.port_)),
        chunk_(std::exchange(other.chunk_, LoanedChunk{})),
        elements_(std::exchange(other.elements_, {})) {}
  Loan& operator=(Loan&& other) noexcept {
    if (this != &other) {
      reset();
      port_ = std::move(other.port_);
      chunk_ = std::exchange(other.chunk_, LoanedChunk{});
      elements_ = std::exchange(other.elements_, {});
    }
    return *this;
  }
  Loan(const Loan&) = delete;
  Loan& operator=(const Loan&) = delete;
  ~Loan() { reset(); }

  /// The elements in shared memory (empty after the loan was published).
  [[nodiscard]] std::span<Element> elements() const noexcept { return elements_; }
  std::span<Element> operator*() const noexcept { return elements_; }
  const std::span<Element>* operator->() const noexcept { return &elements_; }
  Element& operator[](std::size_t i) const noexcept { return elements_[i]; }
  [[nodiscard]] std::size_t size() const noexcept { return elements_.size(); }
  [[nodiscard]] Element* data() const noexcept { return elements_.data(); }
  [[nodiscard]] auto begin() const noexcept { return elements_.begin(); }
  [[nodiscard]] auto end() const noexcept { return elements_.end(); }

 private:
  friend class Publisher<T>;
  /// `count` elements at the chunk's start (the publisher checked that they
  /// fit and that the payload is aligned for Element).
  Loan(std::shared_ptr<PublisherPort> port, LoanedChunk chunk, std::size_t count, bool zero) noexcept
      : port_(std::move(port)), chunk_(chunk) {
    if (zero) {
      std::memset(chunk_.payload, 0, count * sizeof(Element));  // zero bytes start the elements' lifetime
    }
    // Trivially copyable elements: the bytes in the chunk are the objects
    // (implicit-lifetime types; no constructor runs, as for any chunk).
    elements_ = std::span<Element>(reinterpret_cast<Element*>(chunk_.payload), count);
  }
  [[nodiscard]] std::size_t payload_bytes() const noexcept { return elements_.size_bytes(); }
  LoanedChunk release() noexcept {
    port_.reset();
    elements_ = {};
    return std::exchange(chunk_, LoanedChunk{});
  }
  void reset() noexcept {
    if (chunk_.handle != nullptr) {
      port_->discard(chunk_);
      chunk_ = LoanedChunk{};
    }
    elements_ = {};
    port_.reset();
  }

  std::shared_ptr<PublisherPort> port_;
  LoanedChunk chunk_;
  std::span<Element> elements_;
};

}  // namespace axon
