// Sample<T>: a received message. Zero-copy serializers read it in place in
// the publisher's shared memory; decoding serializers hand out an object the
// subscriber decoded into (and reuses); slices and bytes hand out a span of
// elements in shared memory.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <utility>

#include "axon/detail/decoded_pool.hpp"
#include "axon/serializer.hpp"
#include "axon/transport.hpp"

namespace axon {

template <class T>
class Subscriber;

/// Move-only, read-only view of a message. In-place samples give their chunk
/// back to the publisher's pool when dropped; decoded samples give their
/// object back to the subscriber. May be moved to and dropped on any thread.
template <class T>
class Sample {
 public:
  Sample(Sample&& other) noexcept
      : value_(std::exchange(other.value_, nullptr)),
        info_(other.info_),
        port_(std::move(other.port_)),
        chunk_(std::exchange(other.chunk_, ReceivedChunk{})),
        decoded_(std::move(other.decoded_)),
        slot_(std::exchange(other.slot_, -1)) {}
  Sample& operator=(Sample&& other) noexcept {
    if (this != &other) {
      reset();
      value_ = std::exchange(other.value_, nullptr);
      info_ = other.info_;
      port_ = std::move(other.port_);
      chunk_ = std::exchange(other.chunk_, ReceivedChunk{});
      decoded_ = std::move(other.decoded_);
      slot_ = std::exchange(other.slot_, -1);
    }
    return *this;
  }
  Sample(const Sample&) = delete;
  Sample& operator=(const Sample&) = delete;
  ~Sample() { reset(); }

  const T& operator*() const noexcept { return *value_; }
  const T* operator->() const noexcept { return value_; }
  /// The message (a FlatBuffers root table, a raw struct, a decoded object).
  [[nodiscard]] const T* value() const noexcept { return value_; }
  /// Sequence number, publish time, publisher and size of this message.
  [[nodiscard]] const SampleInfo& info() const noexcept { return info_; }
  /// First byte of the message in shared memory (nullptr for decoded samples).
  [[nodiscard]] const void* data() const noexcept { return chunk_.payload; }

 private:
  friend class Subscriber<T>;
  /// In place: the chunk stays held until the sample is dropped.
  Sample(std::shared_ptr<SubscriberPort> port, const ReceivedChunk& chunk, const T* value) noexcept
      : value_(value), info_(chunk.info), port_(std::move(port)), chunk_(chunk) {}
  /// Decoded: the object stays held until the sample is dropped.
  Sample(std::shared_ptr<detail::DecodedPool<T>> decoded, int slot, const T* value, const SampleInfo& info) noexcept
      : value_(value), info_(info), decoded_(std::move(decoded)), slot_(slot) {}

  void reset() noexcept {
    if (chunk_.handle != nullptr) {
      port_->release(chunk_);
      chunk_ = ReceivedChunk{};
    }
    // Both tests: a decoded sample has both; GCC 12 otherwise sees a path with
    // a null pool and warns (-Wstringop-overflow) in in-place samples.
    if (slot_ >= 0 && decoded_ != nullptr) {
      decoded_->release(slot_);
      slot_ = -1;
    }
    port_.reset();
    decoded_.reset();
    value_ = nullptr;
  }

  const T* value_ = nullptr;
  SampleInfo info_;
  std::shared_ptr<SubscriberPort> port_;
  ReceivedChunk chunk_;
  std::shared_ptr<detail::DecodedPool<T>> decoded_;
  int slot_ = -1;
};

/// Slices and bytes: the message's elements, a std::span<const Element>
/// over the publisher's shared memory (`*sample`, `sample->size()`,
/// `sample[i]`, a range loop), checked by the subscriber before it is handed
/// out (a whole number of aligned elements). Move-only; the chunk stays held
/// until the sample is dropped, on any thread.
template <class T>
requires detail::ElementMessage<T>
class Sample<T> {
 public:
  using Element = typename Serializer<T>::Element;

  Sample(Sample&& other) noexcept
      : elements_(std::exchange(other.elements_, {})),
        info_(other.info_),
        port_(std::move(other.port_)),
        chunk_(std::exchange(other.chunk_, ReceivedChunk{})) {}
  Sample& operator=(Sample&& other) noexcept {
    if (this != &other) {
      reset();
      elements_ = std::exchange(other.elements_, {});
      info_ = other.info_;
      port_ = std::move(other.port_);
      chunk_ = std::exchange(other.chunk_, ReceivedChunk{});
    }
    return *this;
  }
  Sample(const Sample&) = delete;
  Sample& operator=(const Sample&) = delete;
  ~Sample() { reset(); }

  /// The elements in shared memory (info().payload_bytes / sizeof(Element) of them).
  [[nodiscard]] std::span<const Element> elements() const noexcept { return elements_; }
  std::span<const Element> operator*() const noexcept { return elements_; }
  const std::span<const Element>* operator->() const noexcept { return &elements_; }
  const Element& operator[](std::size_t i) const noexcept { return elements_[i]; }
  [[nodiscard]] std::size_t size() const noexcept { return elements_.size(); }
  [[nodiscard]] bool empty() const noexcept { return elements_.empty(); }
  [[nodiscard]] auto begin() const noexcept { return elements_.begin(); }
  [[nodiscard]] auto end() const noexcept { return elements_.end(); }
  /// Sequence number, publish time, publisher and size of this message.
  [[nodiscard]] const SampleInfo& info() const noexcept { return info_; }
  /// First byte of the message in shared memory.
  [[nodiscard]] const void* data() const noexcept { return chunk_.payload; }

 private:
  friend class Subscriber<T>;
  Sample(std::shared_ptr<SubscriberPort> port, const ReceivedChunk& chunk, std::span<const Element> elements) noexcept
      : elements_(elements), info_(chunk.info), port_(std::move(port)), chunk_(chunk) {}

  void reset() noexcept {
    if (chunk_.handle != nullptr) {
      port_->release(chunk_);
      chunk_ = ReceivedChunk{};
    }
    port_.reset();
    elements_ = {};
  }

  std::span<const Element> elements_;
  SampleInfo info_;
  std::shared_ptr<SubscriberPort> port_;
  ReceivedChunk chunk_;
};

}  // namespace axon
