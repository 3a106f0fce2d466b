// Message types of the latency benchmark. axon messages are typed and
// sizeof(T) is the message size, so each payload size is its own struct,
// Payload<N>, and a run-time size picks its type through with_payload_type().
// Payloads live only in shared-memory chunks, never on the stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace axon_bench {

/// The only bytes a sender writes into a payload (unless --touch): which
/// message it is and the time its latency counts from.
struct Stamp {
  std::uint64_t index = 0;
  std::int64_t time_ns = 0;
};

inline constexpr std::size_t kStampBytes = sizeof(Stamp);

template <std::size_t kBytes>
struct Payload {
  static_assert(kBytes >= kStampBytes, "a payload holds at least its stamp");
  std::byte data[kBytes];
};

/// Payload sizes with a type: powers of two from 16 B to 16 MiB.
inline constexpr std::size_t kMinPayloadBytes = 16;
inline constexpr std::size_t kPayloadSizeCount = 21;
inline constexpr std::size_t kMaxPayloadBytes = kMinPayloadBytes << (kPayloadSizeCount - 1);

constexpr bool is_supported_payload(std::size_t bytes) noexcept {
  return bytes >= kMinPayloadBytes && bytes <= kMaxPayloadBytes && (bytes & (bytes - 1)) == 0;
}

/// Throws std::invalid_argument, naming `what` ("--sizes", "payload size"),
/// unless `bytes` is a supported payload size.
inline void require_payload_size(std::size_t bytes, std::string_view what) {
  if (!is_supported_payload(bytes)) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(bytes) +
                                " B has no message type; use powers of two from 16 B to 16 MiB");
  }
}

/// Sizes measured when --sizes is not given: a small message, a typical
/// one, an image row block, a camera frame and a large point cloud.
inline std::vector<std::uint64_t> default_payload_sizes() { return {64, 2048, 65536, 1048576, 4194304}; }

namespace detail {
template <class F, std::size_t... kShift>
void dispatch_payload(std::size_t bytes, F& f, std::index_sequence<kShift...> /*unused*/) {
  (void)((bytes == (kMinPayloadBytes << kShift) ? (f.template operator()<Payload<(kMinPayloadBytes << kShift)>>(), true)
                                                : false) ||
         ...);
}
}  // namespace detail

/// Calls `f.template operator()<Payload<bytes>>()`; `bytes` must satisfy
/// is_supported_payload(). Use with a lambda `[&]<class T>() { ... }`.
template <class F>
void with_payload_type(std::size_t bytes, F&& f) {
  detail::dispatch_payload(bytes, f, std::make_index_sequence<kPayloadSizeCount>{});
}

inline void write_stamp(std::byte* payload, const Stamp& stamp) noexcept {
  std::memcpy(payload, &stamp, sizeof(stamp));
}

inline Stamp read_stamp(const std::byte* payload) noexcept {
  Stamp stamp;
  std::memcpy(&stamp, payload, sizeof(stamp));
  return stamp;
}

/// --touch, sender side: writes every byte of the payload.
inline void fill_payload(std::byte* payload, std::size_t bytes, std::uint64_t index) noexcept {
  std::memset(payload, static_cast<int>(index & 0xFF), bytes);
}

/// --touch, receiver side: reads every byte of the payload (the sum keeps
/// the compiler from skipping the reads).
inline std::uint64_t read_payload(const std::byte* payload, std::size_t bytes) noexcept {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i + sizeof(std::uint64_t) <= bytes; i += sizeof(std::uint64_t)) {
    std::uint64_t word;
    std::memcpy(&word, payload + i, sizeof(word));
    sum += word;
  }
  return sum;
}

}  // namespace axon_bench
