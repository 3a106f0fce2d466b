// DatagramWait: a thread sleeping on futex words that reads the datagrams
// which end its sleep in the same system call (futex::WordsAndFdWait's
// receives), into buffers of its own. UdpWaitSource's read in the wait.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "axon/transport.hpp"
#include "src/base/words_and_fd_wait.hpp"

namespace axon::udp {

/// A datagram a waiting thread read.
struct ReceivedDatagram {
  std::span<std::byte> bytes;   ///< What was read: at most the buffer's size (the reader may decrypt it in place).
  std::size_t size = 0;         ///< The datagram's length; above bytes.size(): it was cut.
  std::uint32_t from_ipv4 = 0;  ///< Host order.
  std::uint16_t from_port = 0;
};

/// Per thread; not thread-safe. Allocates only the first time it is asked
/// for larger datagrams.
class DatagramWait {
 public:
  /// Most datagrams one wait_and_receive() reads.
  static constexpr std::size_t kMaxReceives = futex::WordsAndFdWait::kMaxReceives;

  /// What wait_and_receive() read, in the order the socket delivered it.
  struct Received {
    futex::WordsAndFdWait::Woken woken;           ///< readable: at least one datagram was read.
    std::span<const ReceivedDatagram> datagrams;  ///< Valid until the next call.
    bool all_read = false;                        ///< Every receive armed got a datagram: more may wait.
  };
  /// Sleeps on `wait` as WordsAndFdWait::wait() does, but reads up to
  /// `count` (1 .. kMaxReceives) datagrams of at most `datagram_bytes` from
  /// socket `fd` in the same sleep; the socket keeps what was not read.
  Received wait_and_receive(futex::WordsAndFdWait& wait, std::span<WakeWord* const> words,
                            std::span<const std::uint32_t> seen, int fd, std::size_t count, std::size_t datagram_bytes,
                            std::int64_t timeout_ns) noexcept;

 private:
  /// Points each message header at its buffer and address, for `count` receives.
  void prepare(std::size_t count, std::size_t datagram_bytes) noexcept;

  std::array<msghdr, kMaxReceives> messages_{};
  std::array<iovec, kMaxReceives> vectors_{};
  std::array<sockaddr_in, kMaxReceives> from_{};
  std::vector<std::byte> storage_;  ///< kMaxReceives buffers of buffer_bytes_.
  std::size_t buffer_bytes_ = 0;
  std::array<ReceivedDatagram, kMaxReceives> received_{};  ///< In completion order.
};

}  // namespace axon::udp
