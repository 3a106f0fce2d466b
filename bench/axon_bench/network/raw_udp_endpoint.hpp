// The raw-socket side of `axon-bench network`: one UDP socket that sends a
// message as axon does on a 1500-byte MTU (a 64-byte header and up to 1408
// payload bytes per datagram, the same bytes on the wire), gathered from the
// message with sendmmsg, received whole with recvmmsg in batches and copied
// to its place in the message: one copy per fragment, as axon's reassembly.
// (Receiving straight into place with a two-part iovec measured about 30 %
// slower on the development VM, so the baseline does not do that.)
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace axon_bench {

/// What each datagram carries in front of its payload; 64 bytes like axon's
/// DATA header (docs/design/udp.md).
struct RawFragmentHeader {
  std::uint64_t sequence = 0;
  std::uint32_t index = 0;
  std::uint32_t count = 0;
  std::uint32_t total_bytes = 0;
  std::uint8_t padding[44] = {};
};
static_assert(sizeof(RawFragmentHeader) == 64);

/// Payload bytes per datagram: 1500 (MTU) - 20 (IPv4) - 8 (UDP) - 64.
inline constexpr std::size_t kRawFragmentBytes = 1408;
inline constexpr std::size_t kDatagramBytes = sizeof(RawFragmentHeader) + kRawFragmentBytes;
/// Datagrams per sendmmsg/recvmmsg call (axon's batch too).
inline constexpr std::size_t kBatch = 64;

inline constexpr std::uint32_t fragment_count(std::size_t message_bytes) noexcept {
  return message_bytes == 0 ? 1
                            : static_cast<std::uint32_t>((message_bytes + kRawFragmentBytes - 1) / kRawFragmentBytes);
}

/// Result of receive(): a whole message, nothing within the timeout, or
/// datagrams that do not belong to the message asked for.
enum class RawReceive { kComplete, kTimeout, kWrongDatagram, kError };

/// Thread safety: one thread at a time. Not copyable.
class RawUdpEndpoint {
 public:
  /// Binds `local_address`:`port`, connects to `peer_address`:`port`, sets
  /// SO_SNDBUF/SO_RCVBUF to `buffer_bytes` and a receive timeout. Returns
  /// "" or what failed (with errno's text).
  std::string open(const std::string& local_address, const std::string& peer_address, std::uint16_t port,
                   std::uint32_t buffer_bytes, int receive_timeout_ms);
  /// receive() polls (recvmmsg with MSG_DONTWAIT, sched_yield() between) up
  /// to `ns` before each blocking recvmmsg; 0 (the default): blocks at once.
  void poll_before_blocking(std::int64_t ns) noexcept { poll_ns_ = ns; }
  RawUdpEndpoint() = default;
  RawUdpEndpoint(const RawUdpEndpoint&) = delete;
  RawUdpEndpoint& operator=(const RawUdpEndpoint&) = delete;
  ~RawUdpEndpoint();

  /// Sends `bytes` of `data` as message `sequence`; false on a send error.
  bool send(std::uint64_t sequence, const std::byte* data, std::size_t bytes) noexcept;
  /// Receives message `sequence` of `bytes` into `data`, each fragment at its
  /// offset (fragments are expected in order: one veth, one sender).
  RawReceive receive(std::uint64_t sequence, std::byte* data, std::size_t bytes) noexcept;
  /// After a lost datagram: reads datagrams until the last fragment of a
  /// message and returns the sequence after it (0: nothing within the timeout).
  std::uint64_t resynchronize(std::byte* scratch, std::size_t bytes) noexcept;
  /// Small control datagrams (the throughput case's acknowledgements).
  bool send_ack(std::uint64_t sequence) noexcept;
  /// The newest acknowledged sequence within the timeout, or 0.
  std::uint64_t receive_ack() noexcept;

 private:
  /// recvmmsg of up to `count` datagrams: polls for poll_ns_, then blocks.
  int receive_datagrams(mmsghdr* messages, unsigned count) noexcept;

  int fd_ = -1;
  std::int64_t poll_ns_ = 0;
  std::vector<std::byte> staging_ = std::vector<std::byte>(kBatch * kDatagramBytes);  ///< One batch of datagrams.
};

}  // namespace axon_bench
