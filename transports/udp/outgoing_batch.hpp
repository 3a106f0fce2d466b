// The messages of one sendmmsg call, built from a list of datagrams. A run of
// datagrams of one size to one destination becomes one message that the
// kernel cuts into those datagrams (UDP generic segmentation offload,
// UDP_SEGMENT): the route lookup, the socket's accounting and the trip down
// the stack (and, over a veth or a NIC with segmentation offload, the
// receiver's trip up it) are paid once per run instead of once per datagram.
// The receiver sees the same datagrams either way.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "transports/udp/envelope.hpp"
#include "transports/udp/udp_socket.hpp"

namespace axon::udp {

/// Scratch for one sendmmsg call (about 20 KiB: keep it on the stack of the
/// sending thread, or in an object that sends from one thread at a time).
/// build() allocates nothing.
class OutgoingBatch {
 public:
  /// Datagrams per sendmmsg call.
  static constexpr std::size_t kMaxDatagrams = 128;
  /// Datagrams per segmented message: UDP_MAX_SEGMENTS of Linux before 6.x
  /// (later kernels allow 128), so the batch is valid on every kernel that
  /// has UDP_SEGMENT.
  static constexpr std::size_t kMaxSegments = 64;
  /// Shorter runs go one datagram per message: segmenting a message of two
  /// or three datagrams costs more than it saves (the receiver's kernel cuts
  /// it up again; a 2 KiB round trip measured slower with it).
  static constexpr std::size_t kMinSegments = 8;
  /// Bytes per segmented message: what fits one IPv4 packet's length field.
  static constexpr std::size_t kMaxSegmentedBytes = 65535 - 20 - 8;

  /// Fills the messages with datagrams from the front of `datagrams`, up to
  /// kMaxDatagrams of them; with `segment`, runs of kMinSegments or more (same
  /// destination, same size, the last of a run may be shorter) become one
  /// message each. Returns how many datagrams it took (≥ 1 unless empty).
  /// With a `sealer`, each datagram goes behind an envelope it seals (the
  /// calling thread's session, new counters each build()). A sealer that
  /// encrypts writes each datagram's ciphertext to `cipher_arena`, one after
  /// the other, and the batch ends where the arena is full (it must hold the
  /// first datagram: 0 is returned otherwise); the datagrams' own bytes are
  /// only read. The arena must stay untouched until sendmmsg returned.
  std::size_t build(std::span<const OutgoingDatagram> datagrams, bool segment, const EnvelopeSealer* sealer = nullptr,
                    std::span<std::byte> cipher_arena = {}) noexcept;

  [[nodiscard]] mmsghdr* messages() noexcept { return messages_.data(); }
  [[nodiscard]] unsigned message_count() const noexcept { return static_cast<unsigned>(message_count_); }
  /// Datagrams carried by the first `messages` messages.
  [[nodiscard]] std::size_t datagrams_in_first(std::size_t messages) const noexcept;
  /// Whether message `index` is a segmented one.
  [[nodiscard]] bool segmented(std::size_t index) const noexcept { return datagrams_per_message_[index] > 1; }

 private:
  /// Datagrams from the front of `datagrams` that can go as one segmented message.
  static std::size_t run_length(std::span<const OutgoingDatagram> datagrams, std::size_t limit,
                                std::size_t envelope_bytes) noexcept;
  /// How many of the first `run` datagrams' ciphertext fits what is left of the arena.
  [[nodiscard]] std::size_t fitting_the_arena(std::span<const OutgoingDatagram> datagrams,
                                              std::size_t run) const noexcept;
  void add_message(std::span<const OutgoingDatagram> run) noexcept;

  /// One UDP_SEGMENT control message.
  struct alignas(cmsghdr) SegmentControl {
    std::array<unsigned char, CMSG_SPACE(sizeof(std::uint16_t))> bytes;
  };

  // Left uninitialized: build() fills every entry it hands to the kernel, and
  // zeroing 20 KiB would cost more than the typical small send.
  std::array<mmsghdr, kMaxDatagrams> messages_;   // NOLINT(cppcoreguidelines-pro-type-member-init)
  std::array<iovec, 3 * kMaxDatagrams> vectors_;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  /// The envelopes of the datagrams of the batch, in order (with a sealer).
  std::array<EnvelopeBytes, kMaxDatagrams> envelopes_;              // NOLINT(cppcoreguidelines-pro-type-member-init)
  std::array<sockaddr_in, kMaxDatagrams> addresses_;                // NOLINT(cppcoreguidelines-pro-type-member-init)
  std::array<SegmentControl, kMaxDatagrams> controls_;              // NOLINT(cppcoreguidelines-pro-type-member-init)
  std::array<std::uint16_t, kMaxDatagrams> datagrams_per_message_;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  std::size_t message_count_ = 0;
  std::size_t vector_count_ = 0;
  const EnvelopeSealer* sealer_ = nullptr;  ///< Of the build() under way.
  std::size_t sealed_ = 0;                  ///< Envelopes used so far.
  std::span<std::byte> arena_;              ///< Ciphertext of the build() under way (an encrypting sealer).
  std::size_t arena_used_ = 0;
};

}  // namespace axon::udp
