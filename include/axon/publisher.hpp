// Publisher<T>: sends messages of type T on one topic, through the
// Serializer<T> that T selects (raw struct, FlatBuffers, Protobuf, a slice
// of elements, untyped bytes, yours).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "axon/loan.hpp"
#include "axon/outcome.hpp"
#include "axon/result.hpp"
#include "axon/serializer.hpp"
#include "axon/transport.hpp"

namespace axon {

namespace detail {

template <class T>
concept LoansValue = requires {
  requires Serializer<T>::kLoansValue;
};

template <class T>
concept BuildsInPlace = requires {
  requires Serializer<T>::kBuildsInPlace;
};

template <class T>
concept EncodesValue = requires(const T& value, std::span<std::byte> out) {
  { Serializer<T>::encoded_size(value) } -> std::convertible_to<std::size_t>;
  { Serializer<T>::encode(value, out) } -> std::convertible_to<std::size_t>;
};

/// Per-publisher state of a serializer (FlatBuffers keeps its builder here).
template <class T>
struct PublisherStateOf {
  struct None {};
  using type = None;
};
template <class T>
requires requires { typename Serializer<T>::PublisherState; }
struct PublisherStateOf<T> {
  using type = typename Serializer<T>::PublisherState;
};

}  // namespace detail

/// Thread safety: one thread at a time (create one publisher per thread).
/// loan(), publish() and a FlatBuffers builder loan do not allocate, lock or
/// make system calls in the steady state.
template <class T>
class Publisher {
  static_assert(detail::HasSerializer<T>,
                "axon has no serializer for this message type: use a trivially copyable struct, a "
                "FlatBuffers table (#include <axon/serializers/flatbuffers.hpp>), a Protobuf message "
                "(#include <axon/serializers/protobuf.hpp>), or specialize axon::Serializer<T>");
  using S = Serializer<T>;
  using Element = typename detail::ElementOf<T>::type;

 public:
  Publisher(std::shared_ptr<PublisherPort> port, std::string topic, const PublisherQos& qos = {}) noexcept
      : port_(std::move(port)), topic_(std::move(topic)), verify_every_message_(qos.verify_every_message) {
    if constexpr (detail::ElementMessage<T> && !detail::CarriesDeclaredType<T>) {
      shape_.unit_bytes = sizeof(Element);
    }
  }
  /// A bytes publisher that carries messages of `carries` (see
  /// Node::advertise_bytes): its loans must have a size that type allows.
  Publisher(std::shared_ptr<PublisherPort> port, std::string topic, const PublisherQos& qos,
            const TypeIdentity& carries) requires detail::CarriesDeclaredType<T>
      : port_(std::move(port)),
        topic_(std::move(topic)),
        verify_every_message_(qos.verify_every_message),
        shape_(detail::payload_shape(carries)),
        carried_type_(carries.name) {}

  // Move-only for every T. A publisher is one endpoint used by one thread at
  // a time (its sequence numbers, reuse cache and FlatBuffers builder): a
  // copy would be a second handle to the same port that breaks that rule
  // without a word, and FlatBuffers publishers could never be copied anyway
  // (their builder is theirs alone). Share one through the std::shared_ptr
  // Node::advertise() returns, or advertise one per thread. A moved-from
  // publisher may only be destroyed or assigned to.
  Publisher(Publisher&&) noexcept = default;
  Publisher& operator=(Publisher&&) noexcept = default;
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;
  ~Publisher() = default;

  /// Raw structs: memory for one message inside shared memory.
  /// exhausted() when every chunk is in use (back-pressure, an outcome: skip
  /// or retry; explain_exhausted() says who holds them).
  [[nodiscard]] LoanResult<Loan<T>> loan() noexcept requires detail::LoansValue<T> {
    auto chunk = port_->loan(sizeof(T));
    if (!chunk) {
      if (chunk.exhausted()) {
        return kPoolExhausted;
      }
      return chunk.error();
    }
    return Loan<T>(port_, *chunk);
  }

  /// Slices and bytes: room for `count` elements in shared memory, left
  /// as the chunk's previous message left them (write every one). 0 is a
  /// valid message. exhausted() as loan(); kPayloadTooLarge when the
  /// elements do not fit the largest chunk class (the error names the size,
  /// the class and the config key to raise); for a bytes publisher that
  /// carries a type, kInvalidArgument for a size that type cannot have.
  [[nodiscard]] LoanResult<Loan<T>> loan(std::size_t count) noexcept requires detail::ElementMessage<T> {
    return loan_elements(count, false);
  }
  /// The same, with every element's bytes set to zero.
  [[nodiscard]] LoanResult<Loan<T>> loan(std::size_t count,
                                         Zeroed /*kZeroed*/) noexcept requires detail::ElementMessage<T> {
    return loan_elements(count, true);
  }

  /// Raw structs, slices and bytes: sends the loaned message to every
  /// subscriber, no copy. The status counts who got it (see PublishResult).
  /// A loan of another publisher (or an empty one) fails with
  /// kInvalidArgument: the loan then stays with the caller, unchanged, to be
  /// published through the publisher that lent it or dropped (which gives it
  /// back to that one).
  [[nodiscard]] PublishResult publish(
      Loan<T>&& loan) noexcept requires detail::LoansValue<T> || detail::ElementMessage<T> {
    if (loan.port_ != port_) {
      return foreign_loan(loan.port_.get());
    }
    const std::size_t bytes = loan.payload_bytes();
    return port_->publish(loan.release(), bytes);
  }

  /// Slices and bytes: copies `elements` into a loaned chunk and sends them
  /// (the convenience copy; loan(count) writes in place). Fails like
  /// loan(count); exhausted() when no chunk was free.
  [[nodiscard]] PublishResult publish(std::span<const Element> elements) noexcept requires detail::ElementMessage<T> {
    auto loaned = loan_elements(elements.size(), false);
    if (!loaned) {
      return loaned.exhausted() ? PublishResult(kPoolExhausted) : PublishResult(loaned.error());
    }
    if (!elements.empty()) {
      std::memcpy(loaned->data(), elements.data(), elements.size_bytes());
    }
    return publish(std::move(*loaned));
  }

  /// FlatBuffers: a builder whose buffer is a chunk of shared memory. Build
  /// the message with it, then publish(std::move(builder), root).
  /// `expected_bytes` picks the first chunk class (it grows when it must).
  [[nodiscard]] auto loan_builder(std::size_t expected_bytes = 0) noexcept requires detail::BuildsInPlace<T> {
    return S::make_builder(port_, state_, expected_bytes);
  }

  /// FlatBuffers: finishes the builder's message at `root` and sends it.
  /// The publisher's first message (every one with
  /// PublisherQos::verify_every_message) is verified first: one that fails
  /// is not sent, its chunk goes back, and the result is kMalformed naming
  /// what is wrong (subscribers would drop it).
  /// kInvalidArgument for a builder of another publisher: it stays with the
  /// caller, unchanged (as for a Loan). exhausted() when the builder found
  /// no chunk to build in (back-pressure; nothing was sent).
  template <class Builder, class Root>
  [[nodiscard]] PublishResult publish(Builder&& builder, Root root) noexcept requires detail::BuildsInPlace<T> {
    if constexpr (requires { S::built_by(builder, state_); }) {
      if (!S::built_by(builder, state_)) {
        return Error(ErrorCode::kInvalidArgument,
                     "topic '" + topic_ +
                         "': this builder was loaned by another publisher (loan_builder() of each publisher gives "
                         "its own); publish it through that publisher, or drop it");
      }
    }
    auto finished = S::finish(std::forward<Builder>(builder), root, verify_every_message_);
    if (finished.exhausted()) {
      return kPoolExhausted;
    }
    if (!finished) {
      if (finished.error().code() == ErrorCode::kMalformed) {
        return Error(ErrorCode::kMalformed, "topic '" + topic_ + "': " + std::string(finished.error().message()));
      }
      return finished.error();
    }
    return port_->publish(finished->chunk, finished->payload_bytes, finished->payload_offset);
  }

  /// Encodes `value` straight into a loaned chunk and sends it (for raw
  /// structs this is the convenience copy; Protobuf serializes in place).
  /// exhausted() when no chunk was free (nothing sent, not an error).
  [[nodiscard]] PublishResult publish(const T& value) noexcept requires detail::EncodesValue<T> {
    const std::size_t bytes = S::encoded_size(value);
    auto chunk = port_->loan(bytes);
    if (!chunk) {
      return not_loaned(chunk);
    }
    const std::size_t written = S::encode(value, std::span<std::byte>(chunk->payload, chunk->capacity_bytes));
    return port_->publish(*chunk, written);
  }

  /// Sends bytes that are already an encoded message (replay, bridges). The
  /// subscriber verifies them like any other message. exhausted() like
  /// publish(value).
  [[nodiscard]] PublishResult publish_serialized(std::span<const std::byte> bytes) noexcept {
    if constexpr (detail::ElementMessage<T>) {
      if (!shape_.allows(bytes.size())) {
        return not_this_type(bytes.size());
      }
    }
    auto chunk = port_->loan(bytes.size());
    if (!chunk) {
      return not_loaned(chunk);
    }
    std::memcpy(chunk->payload, bytes.data(), bytes.size());
    return port_->publish(*chunk, bytes.size());
  }

  /// How this topic's messages travel.
  [[nodiscard]] static constexpr DataPath data_path() noexcept { return S::kDataPath; }
  /// Subscribers connected now.
  [[nodiscard]] std::uint32_t subscriber_count() const noexcept { return port_->subscriber_count(); }
  [[nodiscard]] const std::string& topic() const noexcept { return topic_; }

  /// Fill level and counters of each connected subscriber (at most
  /// out.size(); returns how many). From the publishing thread.
  [[nodiscard]] std::size_t subscriber_fill(std::span<SubscriberFill> out) const noexcept {
    return port_->subscriber_fill(out);
  }
  /// Who holds the chunks that the last exhausted loan (or publish that
  /// found no chunk) could have used, and what to change. Slow path: formats
  /// the message on demand, so that back-pressure itself costs nothing.
  [[nodiscard]] std::string explain_exhausted() const { return port_->explain_exhausted(); }
  /// Messages published, and what happened to them, over all subscribers.
  [[nodiscard]] PublisherCounters counters() const noexcept { return port_->counters(); }
  /// Called inside publish() when a subscriber's queue reaches
  /// PublisherQos::high_water_percent (once per crossing), so a producer can
  /// lower its rate or skip optional data. Set it before publishing.
  void on_backpressure(std::function<void(const BackpressureEvent&)> handler) {
    port_->on_backpressure(std::move(handler));
  }

 private:
  /// publish(value) without a chunk: back-pressure, or the loan's failure.
  static PublishResult not_loaned(const LoanResult<LoanedChunk>& chunk) noexcept {
    if (chunk.exhausted()) {
      return kPoolExhausted;
    }
    return chunk.error();
  }
  /// The error for a loan that `publish(Loan&&)` cannot send (error path:
  /// allocates the message).
  Error foreign_loan(const PublisherPort* lender) const {
    if (lender == nullptr) {
      return {ErrorCode::kInvalidArgument,
              "topic '" + topic_ + "': this loan is empty (moved from or published already); take a new loan()"};
    }
    const std::string_view other = lender->topic_name();
    return {ErrorCode::kInvalidArgument,
            "topic '" + topic_ + "': this loan was taken from another publisher (of topic '" +
                std::string(other.empty() ? "?" : other) +
                "'); publish it through that publisher, which knows its chunk, or drop it there. The loan "
                "stays with the caller"};
  }

  /// loan(count) of either kind.
  LoanResult<Loan<T>> loan_elements(std::size_t count, bool zero) noexcept {
    // SampleInfo::payload_bytes is 32 bits: a larger message cannot travel.
    if (count > std::numeric_limits<std::uint32_t>::max() / sizeof(Element)) {
      return too_many_elements(count);
    }
    const std::size_t bytes = count * sizeof(Element);
    if constexpr (detail::CarriesDeclaredType<T>) {
      if (!shape_.allows(bytes)) {
        return not_this_type(bytes);
      }
    }
    auto chunk = port_->loan(bytes);
    if (!chunk) {
      if (chunk.exhausted()) {
        return kPoolExhausted;
      }
      return chunk.error();
    }
    if (reinterpret_cast<std::uintptr_t>(chunk->payload) % alignof(Element) != 0) {
      port_->discard(*chunk);
      return Error(ErrorCode::kIncompatible, "the transport loaned a payload not aligned for the element type");
    }
    return Loan<T>(port_, *chunk, count, zero);
  }
  /// Error path (allocates the message).
  [[nodiscard]] Error too_many_elements(std::size_t count) const {
    return {ErrorCode::kPayloadTooLarge, "topic '" + topic_ + "': a loan of " + std::to_string(count) +
                                             " elements of " + std::to_string(sizeof(Element)) +
                                             " bytes is larger than the 4 GiB a message may have"};
  }
  /// Error path: a size the carried type cannot have.
  [[nodiscard]] Error not_this_type(std::size_t bytes) const {
    const std::string rule = shape_.exact_bytes != 0
                                 ? "exactly " + std::to_string(shape_.exact_bytes) + " bytes"
                                 : "a whole number of its " + std::to_string(shape_.unit_bytes) + "-byte elements";
    return {ErrorCode::kInvalidArgument,
            "topic '" + topic_ + "': a message of " + std::to_string(bytes) + " bytes cannot be of type '" +
                (carried_type_.empty() ? S::identity().name : carried_type_) + "', whose messages are " + rule +
                " (every subscriber would reject it); send a size that type has"};
  }

  std::shared_ptr<PublisherPort> port_;
  std::string topic_;
  bool verify_every_message_ = false;
  [[no_unique_address]] typename detail::PublisherStateOf<T>::type state_{};
  /// Slices and bytes: the sizes a message may have.
  detail::PayloadShape shape_;
  /// Bytes that carry a declared type: its name (for errors).
  std::string carried_type_;
};

}  // namespace axon
