// What services (request/response on topics) put on the wire: a small header
// that names the client and the call (in front of a raw struct here; of a
// FlatBuffers or Protobuf message in their serializers), the topic names
// of a service, and the options both sides share (docs/design/services.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "axon/result.hpp"
#include "axon/serializer.hpp"
#include "axon/transport.hpp"
#include "axon/type_identity.hpp"

namespace axon {

/// Queue sizes of a service. Defaults fit parameter and mode-change traffic.
struct ServiceOptions {
  /// Requests the server's queue holds (1..256); a request that finds it
  /// full is refused at once (the call fails with kLimitReached), never
  /// queued behind a server that cannot keep up.
  std::uint32_t request_depth = 64;
  /// Replies a client's queue holds (1..256); the newest are kept.
  std::uint32_t reply_depth = 16;
};

namespace detail {

/// The header of every request and reply: who called and which call.
struct ServiceHeader {
  std::uint64_t client_key = 0;  ///< Random per client; names its reply topic.
  std::uint64_t call_id = 0;     ///< Per client, from 1: the correlation id.
};

/// Bytes of the header in front of a FlatBuffers or Protobuf request or reply.
inline constexpr std::size_t kServiceHeaderBytes = sizeof(ServiceHeader);

/// The identity of the envelope a FlatBuffers or Protobuf service topic
/// carries around messages of identity `body`: its own name and hash, so
/// that a plain topic of the body's type and a service topic never connect.
TypeIdentity service_envelope_identity(TypeIdentity body);

/// A raw request or reply as it travels: header, then the user's struct.
/// Trivially copyable, so it is loaned and read in place (zero copy).
/// FlatBuffers and Protobuf messages travel in their own envelopes
/// (axon/service_format.hpp).
template <class T>
struct ServiceMessage {
  static_assert(RawMessage<T>, "axon: ServiceMessage<T> carries a raw struct (see axon/service_format.hpp)");
  static constexpr std::uint32_t kAxonTypeVersion = message_type_version<T>();
  ServiceHeader header;
  T body;
};

/// "<service>/request": the topic every client publishes to, the server takes from.
std::string request_topic(std::string_view service);
/// "<service>/reply/<key in hex>": one client's replies.
std::string reply_topic(std::string_view service, std::uint64_t client_key);
/// kInvalidArgument naming what is wrong when `service` cannot name a service.
Result<void> check_service_name(std::string_view service);
/// Logs why a server cannot reply to a client (slow path).
void log_service_failure(std::string_view service, const Error& error) noexcept;
/// A random, nonzero client key.
std::uint64_t new_client_key();

/// A callable without ownership, that never allocates (what waits take).
struct ReadyCheck {
  bool (*fn)(void*) noexcept = nullptr;
  void* context = nullptr;
  bool operator()() const noexcept { return fn(context); }
};

/// Sleeps on `words` (futex words, at most 128) until `ready()` is true or
/// `deadline_ns` (CLOCK_MONOTONIC; < 0: none) passed; each sleep lasts at
/// most `slice_ns`, so a readiness that moves no word is noticed too.
/// Returns the last ready(). No allocation.
bool wait_until_ready(std::span<WakeWord* const> words, ReadyCheck ready, std::int64_t deadline_ns,
                      std::int64_t slice_ns) noexcept;
/// CLOCK_MONOTONIC now, in ns.
std::int64_t monotonic_ns() noexcept;

}  // namespace detail
}  // namespace axon
