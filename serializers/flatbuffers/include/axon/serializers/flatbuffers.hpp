// FlatBuffers through axon: the publisher builds the message directly in a
// loaned shared-memory chunk; the subscriber reads the root table in place,
// after flatbuffers::Verifier checked bytes that crossed a process boundary.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "axon/outcome.hpp"
#include "axon/result.hpp"
#include "axon/serializer.hpp"
#include "axon/serializers/flatbuffers_publish_check.hpp"
#include "axon/serializers/flatbuffers_struct_vector.hpp"
#include "axon/transport.hpp"

namespace axon {

/// Identity of a FlatBuffers table: specialized for every table by the
/// `<schema>_axon.h` header that axon_add_flatbuffers_schemas() generates
/// (type name "ns.Table" and a hash of the schema text, includes included).
template <class T>
struct FlatBuffersSchema;

namespace detail {

/// A flatbuffers::Allocator whose buffer is a loaned chunk. The buffer is
/// placed at the end of the chunk (FlatBuffers builds from the end), so
/// growing within the chunk moves only the builder's small scratch area;
/// growing beyond it moves to a chunk of a larger class (the one copy).
/// When no chunk can be had the builder gets heap memory so it keeps
/// working, and publish() reports it (exhausted(), or the loan's error)
/// instead of a crash.
class ChunkAllocator final : public flatbuffers::Allocator {
 public:
  explicit ChunkAllocator(std::shared_ptr<PublisherPort> port) noexcept : port_(std::move(port)) {}
  ChunkAllocator(const ChunkAllocator&) = delete;
  ChunkAllocator& operator=(const ChunkAllocator&) = delete;
  ~ChunkAllocator() override { drop(); }

  /// Prepares for a new message whose size is expected to be `expected_bytes`,
  /// keeping `front_bytes` of every chunk free in front of the builder's
  /// buffer (a service's header goes there, axon/serializers/flatbuffers_service.hpp).
  void begin(std::size_t expected_bytes, std::size_t front_bytes = 0) noexcept {
    expected_bytes_ = expected_bytes;
    front_bytes_ = front_bytes;
    published_ = false;
    exhausted_ = false;
    error_.reset();
  }

  std::uint8_t* allocate(std::size_t size) override {
    const std::size_t want = size > expected_bytes_ ? size : expected_bytes_;
    return place(size, want);
  }

  std::uint8_t* reallocate_downward(std::uint8_t* old_p, std::size_t old_size, std::size_t new_size,
                                    std::size_t in_use_back, std::size_t in_use_front) override {
    if (chunk_.handle != nullptr && new_size + front_bytes_ <= chunk_.capacity_bytes) {
      // Grow inside the chunk: the built part already sits at its end.
      std::uint8_t* new_p = chunk_end() - new_size;
      std::memmove(new_p, old_p, in_use_front);
      return new_p;
    }
    LoanedChunk old_chunk = std::exchange(chunk_, LoanedChunk{});
    std::unique_ptr<std::uint8_t[]> old_heap = std::move(heap_);
    std::uint8_t* new_p = place(new_size, new_size);
    memcpy_downward(old_p, old_size, new_p, new_size, in_use_back, in_use_front);
    if (old_chunk.handle != nullptr) {
      port_->discard(old_chunk);
    }
    return new_p;
  }

  void deallocate(std::uint8_t* /*p*/, std::size_t /*size*/) override { drop(); }

  /// After Finish(): the chunk and where the message lies in it.
  [[nodiscard]] const LoanedChunk& chunk() const noexcept { return chunk_; }
  [[nodiscard]] const std::optional<Error>& error() const noexcept { return error_; }
  /// A loan found no free chunk (back-pressure, not an error).
  [[nodiscard]] bool exhausted() const noexcept { return exhausted_; }
  /// The chunk now belongs to the transport: never discard it.
  void mark_published() noexcept {
    published_ = true;
    chunk_ = LoanedChunk{};
  }

 private:
  [[nodiscard]] std::uint8_t* chunk_end() const noexcept {
    return reinterpret_cast<std::uint8_t*>(chunk_.payload) + chunk_.capacity_bytes;
  }
  std::uint8_t* place(std::size_t size, std::size_t want) {
    auto loaned = port_->loan(want + front_bytes_);
    if (!loaned && want != size) {
      loaned = port_->loan(size + front_bytes_);
    }
    if (loaned) {
      chunk_ = *loaned;
      return chunk_end() - size;
    }
    // Keep the builder alive on the heap; publish() reports what happened.
    if (loaned.exhausted()) {
      exhausted_ = true;
    } else if (!error_) {
      error_ = loaned.error();
    }
    heap_ = std::make_unique<std::uint8_t[]>(size);
    return heap_.get();
  }
  void drop() noexcept {
    if (chunk_.handle != nullptr && !published_) {
      port_->discard(chunk_);
    }
    chunk_ = LoanedChunk{};
    heap_.reset();
  }

  std::shared_ptr<PublisherPort> port_;
  LoanedChunk chunk_;
  std::unique_ptr<std::uint8_t[]> heap_;
  std::size_t expected_bytes_ = 0;
  std::size_t front_bytes_ = 0;
  bool published_ = false;
  bool exhausted_ = false;
  std::optional<Error> error_;
};

/// A publisher's reusable builder (created on its first builder loan).
struct FlatBufferBuilderState {
  explicit FlatBufferBuilderState(std::shared_ptr<PublisherPort> port)
      : allocator(std::move(port)), builder(1024, &allocator, false, 64) {}
  ChunkAllocator allocator;
  flatbuffers::FlatBufferBuilder builder;
  bool in_use = false;
  /// A message of this publisher passed the publisher's verification: from
  /// then on only PublisherQos::verify_every_message or the struct-vector
  /// pitfall make it verify again.
  bool verified_one = false;
};

}  // namespace detail

/// A FlatBuffers message under construction in shared memory. Move-only; one
/// per publisher at a time. Dropping it unpublished returns the chunk.
template <class T>
class FlatBufferLoan {
 public:
  FlatBufferLoan(FlatBufferLoan&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  FlatBufferLoan& operator=(FlatBufferLoan&& other) noexcept {
    if (this != &other) {
      reset();
      state_ = std::exchange(other.state_, nullptr);
    }
    return *this;
  }
  FlatBufferLoan(const FlatBufferLoan&) = delete;
  FlatBufferLoan& operator=(const FlatBufferLoan&) = delete;
  ~FlatBufferLoan() { reset(); }

  /// Build the message with this, then Publisher::publish(std::move(loan), root).
  flatbuffers::FlatBufferBuilder& builder() noexcept { return state_->builder; }

 private:
  friend struct Serializer<T>;
  explicit FlatBufferLoan(detail::FlatBufferBuilderState* state) noexcept : state_(state) {}
  void reset() noexcept {
    if (state_ != nullptr) {
      state_->builder.Reset();  // hands an unpublished chunk back
      state_->in_use = false;
      state_ = nullptr;
    }
  }
  detail::FlatBufferBuilderState* state_;
};

/// FlatBuffers tables (recognised by what flatc generates).
template <detail::FlatBuffersTable T>
struct Serializer<T> {
  static constexpr std::string_view kName = "flatbuffers";
  static constexpr DataPath kDataPath = DataPath::kZeroCopy;
  static constexpr bool kReadsInPlace = true;
  static constexpr bool kBuildsInPlace = true;
  using PublisherState = std::unique_ptr<detail::FlatBufferBuilderState>;

  static TypeIdentity identity() {
    static_assert(
        requires { FlatBuffersSchema<T>::kTypeName; },
        "include the <schema>_axon.h header that axon_add_flatbuffers_schemas() generated "
        "for this table (it gives the table its axon type identity)");
    TypeIdentity id;
    id.name = std::string(FlatBuffersSchema<T>::kTypeName);
    id.hash = FlatBuffersSchema<T>::kSchemaHash;
    id.serializer = std::string(kName);
    return id;
  }

  /// The binary schema (.bfbs) flatc embedded for T's schema file
  /// (axon_add_flatbuffers_schemas() without NO_BINARY_SCHEMA, and a
  /// root_type), which its publishers store for tools; empty without one.
  static std::vector<std::byte> schema() {
    if constexpr (requires { FlatBuffersSchema<T>::binary_schema(); }) {
      const std::span<const std::uint8_t> bfbs = FlatBuffersSchema<T>::binary_schema();
      const auto* first = reinterpret_cast<const std::byte*>(bfbs.data());
      return {first, first + bfbs.size()};
    } else {
      return {};
    }
  }

  /// The root table in place; nullptr when verification fails.
  static const T* view(std::span<const std::byte> in, bool verify) noexcept {
    const auto* data = reinterpret_cast<const std::uint8_t*>(in.data());
    if (in.size() < sizeof(flatbuffers::uoffset_t) || in.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) {
      return nullptr;
    }
    // The root offset, the root table, its vtable and the first vector headers
    // sit in the first lines (FlatBuffers writes the root last, lowest): ask
    // for them together instead of one dependent miss after the other.
    for (std::size_t line = 0; line < 4 && line * 64 < in.size(); ++line) {
      __builtin_prefetch(data + line * 64);
    }
    if (verify) {
      flatbuffers::Verifier verifier(data, in.size());
      if (!verifier.VerifyBuffer<T>(nullptr)) {
        return nullptr;
      }
    }
    return flatbuffers::GetRoot<T>(data);
  }

  /// `front_bytes`: room the message leaves free in front of it in its chunk
  /// (see ChunkAllocator::begin()).
  static Result<FlatBufferLoan<T>> make_builder(const std::shared_ptr<PublisherPort>& port, PublisherState& state,
                                                std::size_t expected_bytes, std::size_t front_bytes = 0) noexcept {
    if (!state) {
      state = std::make_unique<detail::FlatBufferBuilderState>(port);  // first use only
    }
    if (state->in_use) {
      return Error(ErrorCode::kInvalidArgument, "this publisher's builder is already loaned; publish or drop it first");
    }
    state->in_use = true;
    state->builder.Reset();
    state->allocator.begin(expected_bytes, front_bytes);
    if (expected_bytes > 0) {
      // The builder reserves its initial size first and grows by half when
      // full: start at the expected size so a message that fits its chunk
      // class never needs a larger one. (No allocation: the buffer comes
      // from the chunk allocator on first use.)
      state->builder = flatbuffers::FlatBufferBuilder(expected_bytes, &state->allocator, false, 64);
    }
    return FlatBufferLoan<T>(state.get());
  }

  /// Finishes the message at `root`. The publisher's first message, any
  /// built with the struct-vector pitfall and, with `verify_every_message`,
  /// every message are verified first: one that fails is kMalformed and its
  /// chunk goes back (never published, never leaked). exhausted() when the
  /// builder found no chunk to build in.
  static LoanResult<EncodedChunk> finish(FlatBufferLoan<T>&& loan, flatbuffers::Offset<T> root,
                                         bool verify_every_message = false) noexcept {
    detail::FlatBufferBuilderState& state = *loan.state_;
    state.builder.Finish(root);
    if (state.allocator.error()) {
      Error error = *state.allocator.error();
      loan.reset();  // frees the builder's memory
      return error;
    }
    if (state.allocator.exhausted()) {
      loan.reset();  // frees the builder's memory
      return kPoolExhausted;
    }
    const LoanedChunk chunk = state.allocator.chunk();
    const std::uint8_t* data = state.builder.GetBufferPointer();
    const std::size_t alignment = state.builder.GetBufferMinAlignment();
    if (verify_every_message || !state.verified_one || detail::has_struct_vector_pitfall(alignment)) {
      if (auto failed = detail::check_before_publish<T>(data, state.builder.GetSize(), alignment,
                                                        FlatBuffersSchema<T>::kTypeName)) {
        loan.reset();  // hands the chunk back unpublished
        return *failed;
      }
      state.verified_one = true;
    }
    const EncodedChunk encoded{
        .chunk = chunk,
        .payload_bytes = state.builder.GetSize(),
        .payload_offset = static_cast<std::size_t>(data - reinterpret_cast<const std::uint8_t*>(chunk.payload))};
    state.allocator.mark_published();
    loan.reset();  // the builder lets go; the bytes stay in the chunk
    return encoded;
  }

  /// Whether `loan` came from the publisher whose state is `state` (its
  /// chunks belong to that publisher's port alone).
  static bool built_by(const FlatBufferLoan<T>& loan, const PublisherState& state) noexcept {
    return state != nullptr && loan.state_ == state.get();
  }
};

}  // namespace axon

#include "axon/serializers/flatbuffers_service.hpp"  // services of FlatBuffers tables (needs the above)
