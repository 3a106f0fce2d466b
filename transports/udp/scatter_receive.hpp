// Receiving fragments straight into their chunk: before a recvmmsg batch the
// reassembler predicts which fragments come next, and each predicted
// datagram's payload is read into its place in the message's chunk; after the
// batch, the datagrams that did not come as predicted are put back together
// in their own buffers. Design: docs/design/udp.md, "Receiving in place".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "transports/udp/datagram_guard.hpp"
#include "transports/udp/reassembly.hpp"
#include "transports/udp/udp_socket.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp {

/// One received datagram, as it is to be handled.
struct Arrival {
  enum class Kind : std::uint8_t {
    kTooLong,     ///< Longer than its buffer (the kernel cut it): refuse it.
    kContiguous,  ///< `bytes` is the whole datagram: parse and handle it as usual.
    kInPlace,     ///< A predicted fragment, parsed into `parsed`, its payload already in place: feed it.
    kStale,       ///< A predicted fragment whose message no longer holds that chunk: drop it unread.
    kRefused,     ///< The guard refused it (source, envelope): counted there, never parsed.
  };
  Kind kind = Kind::kTooLong;
  std::span<const std::byte> bytes;        ///< kContiguous: the datagram after its envelope.
  const ParsedDatagram* parsed = nullptr;  ///< kInPlace: valid until the next prepare().
  Endpoint from;
};

/// The buffers of a receive loop and the bookkeeping of one batch at a time:
///   prepare() → UdpSocket::receive_batch() → settle() → arrival(i) for each i, in order.
///
/// A datagram received under a prediction is split three ways: its first
/// kDataHeaderBytes into its own buffer, the next bytes (exactly the predicted
/// fragment's length) into the fragment's place in the chunk, the rest (a
/// longer datagram's tail) into its buffer after where those bytes would be.
/// settle() parses each such datagram in its two pieces; one that is not the
/// predicted fragment (another type, length, sender, writer, message, index
/// or size) gets its middle bytes copied back, so that it is contiguous in its
/// buffer. This happens for the whole batch before any datagram is handled:
/// handling one may copy a fragment into the chunk over bytes of a later one.
///
/// Thread safety: none; the receiver thread owns it, like the Reassembler it
/// asks. Memory: the buffers are allocated by the constructor, nothing after.
class ScatterReceive {
 public:
  /// `batch` datagrams per receive (1..UdpSocket::kMaxBatch), each up to
  /// `datagram_bytes` long (a longer one is reported kTooLong), each behind
  /// an envelope of `envelope_bytes` (0: none; see DatagramGuard).
  ScatterReceive(std::size_t batch, std::size_t datagram_bytes, std::size_t envelope_bytes = 0);

  /// Sets up the next receive and returns the datagrams to pass to
  /// UdpSocket::receive_batch(). The first ones point at the fragments
  /// `reassembler` predicts (none when it is null, e.g. a discovery socket);
  /// a prediction too long for a buffer is not used. Does not allocate.
  [[nodiscard]] std::span<IncomingDatagram> prepare(const Reassembler* reassembler) noexcept;

  /// After receive_batch() returned `received`: asks `guard` (when given and
  /// active) about every datagram first, then keeps the predicted datagrams
  /// that are the predicted fragments (parsed with `limits`) and makes every
  /// other one contiguous in its buffer. A datagram the guard refuses is
  /// neither parsed nor put back together. Call before handling any of them.
  /// Encrypted datagrams are decrypted where they lie, the payload of a
  /// predicted one in the chunk: one the guard refuses may leave garbled
  /// bytes there, only in the place of a fragment not received yet (a
  /// prediction never names a received one), which the real fragment
  /// overwrites before its message can complete, as for any datagram that
  /// missed its prediction.
  void settle(std::size_t received, const WireLimits& limits, DatagramGuard* guard = nullptr) noexcept;

  /// Datagram `i` (< received) of the batch. Call in arrival order, each right
  /// before handling the datagram: whether a predicted fragment's message
  /// still holds its chunk is asked of `reassembler` then, after the earlier
  /// datagrams were handled (one may have completed, evicted or restarted it).
  [[nodiscard]] Arrival arrival(std::size_t i, const Reassembler& reassembler) const noexcept;

  /// Datagrams of the current batch received under a prediction.
  [[nodiscard]] std::size_t predicted() const noexcept { return predicted_count_; }

 private:
  [[nodiscard]] std::span<std::byte> buffer(std::size_t i) noexcept {
    return std::span(storage_).subspan(i * datagram_bytes_, datagram_bytes_);
  }
  [[nodiscard]] std::span<const std::byte> buffer(std::size_t i) const noexcept {
    return std::span(storage_).subspan(i * datagram_bytes_, datagram_bytes_);
  }

  std::size_t batch_;
  std::size_t datagram_bytes_;
  std::size_t envelope_bytes_;
  std::vector<std::byte> storage_;  ///< batch_ buffers of datagram_bytes_.
  std::array<IncomingDatagram, UdpSocket::kMaxBatch> incoming_{};
  std::array<PredictedFragment, UdpSocket::kMaxBatch> predictions_{};
  std::size_t predicted_count_ = 0;
  std::size_t received_ = 0;
  std::array<bool, UdpSocket::kMaxBatch> in_place_{};
  std::array<bool, UdpSocket::kMaxBatch> refused_{};
  std::vector<ParsedDatagram> parsed_;  ///< batch_ entries (large: kept off the stack).
};

}  // namespace axon::udp
