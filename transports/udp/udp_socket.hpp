// A non-blocking IPv4 UDP socket with the few operations the transport needs:
// bind, buffer sizes, multicast, batched send (sendmmsg) and receive (recvmmsg).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "axon/result.hpp"

namespace axon::udp {

class EnvelopeSealer;

/// An IPv4 address and port, both in host order.
struct Endpoint {
  std::uint32_t ipv4 = 0;
  std::uint16_t port = 0;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
  [[nodiscard]] sockaddr_in to_sockaddr() const noexcept;
  [[nodiscard]] static Endpoint from_sockaddr(const sockaddr_in& address) noexcept;
  [[nodiscard]] std::string to_string() const;
};

/// "10.0.0.1" → host-order address; kInvalidArgument for anything else
/// (IPv6 is named as unsupported by this transport).
Result<std::uint32_t> parse_ipv4(const std::string& text);

struct SocketOptions {
  Endpoint bind;                           ///< ipv4 0: any address; port 0: the kernel picks.
  bool reuse_address = false;              ///< Several sockets share the port (multicast discovery).
  std::uint32_t send_buffer_bytes = 0;     ///< 0: the kernel default.
  std::uint32_t receive_buffer_bytes = 0;  ///< 0: the kernel default.
  /// send_batch() hands runs of equal datagrams to one destination to the
  /// kernel as one message it cuts up (UDP_SEGMENT), when the kernel has it;
  /// false: one message per datagram.
  bool segmentation = true;
};

/// One datagram to send: a header and a payload, gathered by the kernel.
struct OutgoingDatagram {
  std::span<const std::byte> header;
  std::span<const std::byte> payload;
  Endpoint to;
};

/// Where one datagram of a batch is received: its bytes fill `pieces` in
/// order, each up to its size (a scatter read: e.g. the header into one
/// buffer and the payload straight into its place in a chunk); unused pieces
/// stay empty. receive_batch() sets `size` and `from`.
struct IncomingDatagram {
  static constexpr std::size_t kMaxPieces = 3;
  std::array<std::span<std::byte>, kMaxPieces> pieces{};
  std::size_t size = 0;  ///< The datagram's real length: above capacity() when it was cut to fit.
  Endpoint from;

  [[nodiscard]] std::size_t capacity() const noexcept {
    std::size_t bytes = 0;
    for (const std::span<std::byte> piece : pieces) {
      bytes += piece.size();
    }
    return bytes;
  }
};

/// Thread safety: send() and send_batch() from any thread (the kernel
/// serialises them); receive_batch() from one thread.
class UdpSocket {
 public:
  /// Datagrams per receive_batch().
  static constexpr std::size_t kMaxBatch = 64;

  UdpSocket() = default;
  static Result<UdpSocket> open(const SocketOptions& options);
  UdpSocket(UdpSocket&& other) noexcept;
  UdpSocket& operator=(UdpSocket&& other) noexcept;
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;
  ~UdpSocket();

  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// From now on every datagram sent goes behind an envelope `sealer` seals
  /// and, when it encrypts, as its ciphertext, written to the sending
  /// thread's arena (cipher_arena.hpp; docs/design/udp.md, "Authenticated
  /// datagrams"). Call before the socket is shared between threads.
  void seal_with(std::shared_ptr<const EnvelopeSealer> sealer) noexcept { sealer_ = std::move(sealer); }
  [[nodiscard]] Endpoint local() const noexcept { return local_; }
  /// The usable size of the receive buffer (SO_RCVBUF as the kernel set it,
  /// which reports twice the usable size); 0 when it cannot be read.
  [[nodiscard]] std::size_t receive_buffer_bytes() const noexcept;

  /// Joins `group` on the interface that has `interface_ipv4`.
  Result<void> join_multicast(std::uint32_t group, std::uint32_t interface_ipv4);
  /// Sends multicast through the interface that has `interface_ipv4`, one hop,
  /// looped back so participants of this host hear it too.
  Result<void> send_multicast_through(std::uint32_t interface_ipv4);

  /// Sends `datagrams` (any number) with sendmmsg, up to 128 per call (runs
  /// of equal datagrams to one destination as one segmented message each,
  /// see OutgoingBatch); waits (poll) while the send buffer is full. Returns
  /// how many were sent; a datagram the kernel refuses (unreachable, too
  /// large) is skipped and counted as not sent. A segmented message the
  /// kernel refuses as such (a device without checksum offload: EIO) is sent
  /// again one datagram per message, and the socket stops segmenting.
  std::size_t send_batch(std::span<const OutgoingDatagram> datagrams) noexcept;
  /// One datagram.
  bool send(std::span<const std::byte> bytes, Endpoint to) noexcept;

  /// Receives up to datagrams.size() (at most kMaxBatch) datagrams with one
  /// recvmmsg, without waiting: datagram i into datagrams[i].pieces, setting
  /// its size and sender. A datagram longer than its pieces is cut and reports
  /// its full length (so the caller can refuse it). Returns how many were
  /// received (0: none waiting).
  std::size_t receive_batch(std::span<IncomingDatagram> datagrams) noexcept;
  /// Whether a datagram waits to be received (one ioctl).
  [[nodiscard]] bool has_pending() const noexcept;
  /// Whether send_batch() segments runs (asked for, the kernel has it, and
  /// no send refused it yet).
  [[nodiscard]] bool segments() const noexcept { return segmentation_.load(std::memory_order_relaxed); }
  /// Segmented messages sent so far (a statistic).
  [[nodiscard]] std::uint64_t segmented_messages() const noexcept {
    return segmented_messages_.load(std::memory_order_relaxed);
  }

 private:
  explicit UdpSocket(int fd) noexcept : fd_(fd) {}
  /// A segmented message was refused with `error`: whether that means the
  /// path cannot segment (then segmentation is off for good).
  bool give_up_segmentation(int error) noexcept;

  int fd_ = -1;
  Endpoint local_;
  std::shared_ptr<const EnvelopeSealer> sealer_;  ///< Null: datagrams go as they are.
  // Relaxed: flags and statistics, no data is published through them.
  std::atomic<bool> segmentation_{false};
  std::atomic<std::uint64_t> segmented_messages_{0};
};

}  // namespace axon::udp
