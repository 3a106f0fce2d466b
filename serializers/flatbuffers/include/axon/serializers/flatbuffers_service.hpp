// Services of FlatBuffers tables (docs/design/services.md, "Formats"): the
// request or reply is built by a FlatBuffers builder in a loaned chunk, as a
// topic's message is, with the service header in the 16 bytes the builder
// leaves free in front of it; the other side reads header and root table in
// place, after the Verifier. Zero copy both ways. Included by
// <axon/serializers/flatbuffers.hpp>.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cassert>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <utility>

#include "axon/outcome.hpp"
#include "axon/publisher.hpp"
#include "axon/result.hpp"
#include "axon/serializer.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "axon/service_format.hpp"
#include "axon/service_message.hpp"

namespace axon {

namespace detail {

/// A FlatBuffers request or reply where it lies in shared memory: the header
/// (16 bytes, copied out: FlatBuffers aligns the message, not what is in
/// front of it), then the FlatBuffers message. Never constructed: a
/// subscriber's view points at the chunk's bytes.
template <FlatBuffersTable T>
class FlatBufferServiceMessage {
 public:
  FlatBufferServiceMessage() = delete;
  FlatBufferServiceMessage(const FlatBufferServiceMessage&) = delete;
  FlatBufferServiceMessage& operator=(const FlatBufferServiceMessage&) = delete;
  ~FlatBufferServiceMessage() {}  // NOLINT(modernize-use-equals-default): not trivial, so never a raw message

  [[nodiscard]] ServiceHeader header() const noexcept {
    ServiceHeader header;
    std::memcpy(&header, bytes(), kServiceHeaderBytes);
    return header;
  }
  /// The root table (verified by the subscriber's view()).
  [[nodiscard]] const T& body() const noexcept { return *flatbuffers::GetRoot<T>(bytes() + kServiceHeaderBytes); }

 private:
  [[nodiscard]] const std::uint8_t* bytes() const noexcept { return reinterpret_cast<const std::uint8_t*>(this); }
  std::uint8_t first_byte_;
};

}  // namespace detail

/// A FlatBuffers request or reply under construction in a loaned chunk
/// (Client::loan_builder(), or the builder a server's handler gets).
/// Move-only; dropping it unsent gives the chunk back.
template <class T>
class FlatBufferServiceLoan {
 public:
  /// Build the message with this, then Client::call(std::move(loan), root, timeout).
  flatbuffers::FlatBufferBuilder& builder() noexcept { return loan_.builder(); }
  /// The header the message will carry. Client and Server stamp it when
  /// they send; what else stamps it is overwritten then.
  void stamp(const detail::ServiceHeader& header) noexcept { header_ = header; }

 private:
  friend struct Serializer<detail::FlatBufferServiceMessage<T>>;
  explicit FlatBufferServiceLoan(FlatBufferLoan<T> loan) noexcept : loan_(std::move(loan)) {}
  FlatBufferLoan<T> loan_;
  detail::ServiceHeader header_;
};

/// The wire format of a FlatBuffers service topic: T's serializer with the
/// header in front.
template <detail::FlatBuffersTable T>
struct Serializer<detail::FlatBufferServiceMessage<T>> {
  using Message = detail::FlatBufferServiceMessage<T>;
  using Body = Serializer<T>;
  static constexpr std::string_view kName = "flatbuffers";
  static constexpr DataPath kDataPath = DataPath::kZeroCopy;
  static constexpr bool kReadsInPlace = true;
  static constexpr bool kBuildsInPlace = true;
  using PublisherState = typename Body::PublisherState;

  static TypeIdentity identity() { return detail::service_envelope_identity(Body::identity()); }

  /// Header and message in place; nullptr when the message fails verification.
  static const Message* view(std::span<const std::byte> in, bool verify) noexcept {
    if (in.size() < detail::kServiceHeaderBytes ||
        Body::view(in.subspan(detail::kServiceHeaderBytes), verify) == nullptr) {
      return nullptr;
    }
    return reinterpret_cast<const Message*>(in.data());
  }

  /// A builder over a loaned chunk that leaves room for the header in front.
  static Result<FlatBufferServiceLoan<T>> make_builder(const std::shared_ptr<PublisherPort>& port,
                                                       PublisherState& state, std::size_t expected_bytes) noexcept {
    auto loan = Body::make_builder(port, state, expected_bytes, detail::kServiceHeaderBytes);
    if (!loan) {
      return loan.error();
    }
    return FlatBufferServiceLoan<T>(std::move(*loan));
  }

  /// Finishes the message (verified as a topic's), then writes the header
  /// into the room in front of it; the payload starts at the header.
  static LoanResult<EncodedChunk> finish(FlatBufferServiceLoan<T>&& loan, flatbuffers::Offset<T> root,
                                         bool verify_every_message = false) noexcept {
    auto finished = Body::finish(std::move(loan.loan_), root, verify_every_message);
    if (!finished) {
      return finished;
    }
    EncodedChunk encoded = *finished;
    // ChunkAllocator kept kServiceHeaderBytes of every chunk free in front of its buffer.
    assert(encoded.payload_offset >= detail::kServiceHeaderBytes && "the builder left no room for the header");
    encoded.payload_offset -= detail::kServiceHeaderBytes;
    encoded.payload_bytes += detail::kServiceHeaderBytes;
    std::memcpy(encoded.chunk.payload + encoded.payload_offset, &loan.header_, detail::kServiceHeaderBytes);
    return encoded;
  }

  static bool built_by(const FlatBufferServiceLoan<T>& loan, const PublisherState& state) noexcept {
    return Body::built_by(loan.loan_, state);
  }
};

namespace detail {

/// FlatBuffers services: requests built with Client::loan_builder(), replies
/// built by the handler in a builder over a loaned chunk; both read in place.
template <FlatBuffersTable T>
struct ServiceFormat<T> {
  using Incoming = FlatBufferServiceMessage<T>;
  using Outgoing = FlatBufferServiceMessage<T>;
  template <class Req>
  using Handler = std::function<flatbuffers::Offset<T>(const Req& request, flatbuffers::FlatBufferBuilder& reply)>;
  struct ServerScratch {};

  static ServiceHeader header(const Incoming& message) noexcept { return message.header(); }
  static const T& body(const Incoming& message) noexcept { return message.body(); }

  /// Loans a builder, lets the handler build the reply in it, publishes it.
  template <class Req>
  static PublishResult reply(Publisher<Outgoing>& out, const ServiceHeader& header, const Req& request,
                             const Handler<Req>& handler, ServerScratch& /*scratch*/) noexcept {
    auto loan = out.loan_builder();
    if (!loan) {
      return loan.error();
    }
    loan->stamp(header);
    const flatbuffers::Offset<T> root = handler(request, loan->builder());
    return out.publish(std::move(*loan), root);
  }
};

}  // namespace detail
}  // namespace axon
