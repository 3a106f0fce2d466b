// One thread sleeping on futex words (WakeWord, see src/futex.hpp) and a
// socket at once, in one system call: io_uring with IORING_OP_FUTEX_WAITV
// and IORING_OP_POLL_ADD or IORING_OP_RECVMSG (Linux 6.7+). The building
// block of a subscriber thread that reads its host's UDP socket itself
// instead of being woken by the UDP thread (docs/design/udp-transport.md,
// "One wake-up per message"). Raw system calls: Debian 12's liburing (2.3)
// predates the futex operations.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "axon/result.hpp"
#include "axon/transport.hpp"
#include "src/base/futex.hpp"

namespace axon::futex {

/// Per thread; not thread-safe. Does not allocate after create(), except
/// receive buffers the first time wait_and_receive() needs larger ones.
class SocketAndWordsWait {
 public:
  /// Most datagrams one wait_and_receive() reads.
  static constexpr std::size_t kMaxReceives = 8;

  /// Whether this kernel's io_uring can wait on futex words (probed once per
  /// process; false where io_uring is disabled or the kernel is older than 6.7).
  [[nodiscard]] static bool supported() noexcept;
  /// A ring of its own. kSystem, saying why, where io_uring cannot do it.
  static Result<std::unique_ptr<SocketAndWordsWait>> create();

  SocketAndWordsWait(const SocketAndWordsWait&) = delete;
  SocketAndWordsWait& operator=(const SocketAndWordsWait&) = delete;
  ~SocketAndWordsWait();

  /// What ended a wait; more than one may be true. All false: a signal or
  /// an error of the ring (the caller looks again, as after any wake-up).
  struct Woken {
    bool word_moved = false;  ///< A word moved from its `seen` value (or had already).
    bool readable = false;    ///< `fd` is readable.
    bool timed_out = false;
  };
  /// Sleeps until one of `words` moves away from `seen` (same index, as
  /// Waiter), `fd` becomes readable, or `timeout_ns` passes (< 0: none).
  /// At most kMaxWords words. The caller follows Waiter's protocol (waiters
  /// counted and readiness checked before it sleeps). The futex request left
  /// armed by the last call (it holds nothing) is reused when it still stands
  /// for the same wait, else cancelled first; the socket poll never outlives
  /// a call.
  Woken wait(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen, int fd,
             std::int64_t timeout_ns) noexcept;

  /// What wait_and_receive() read, in the order the socket delivered it.
  struct Received {
    Woken woken;                                  ///< readable: at least one datagram was read.
    std::span<const ReceivedDatagram> datagrams;  ///< Valid until the next call.
    bool all_read = false;                        ///< Every receive armed got a datagram: more may wait.
  };
  /// As wait(), but instead of watching `fd` it reads up to `count` (1 ..
  /// kMaxReceives) datagrams of at most `datagram_bytes` from it in the same
  /// sleep (IORING_OP_RECVMSG): the wake-up brings the data, no receive call
  /// follows. Receives still armed when the wait ends are cancelled (a
  /// datagram that one of them read meanwhile is returned too), so the socket
  /// keeps what was not read.
  Received wait_and_receive(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen, int fd,
                            std::size_t count, std::size_t datagram_bytes, std::int64_t timeout_ns) noexcept;

 private:
  struct Ring;
  friend SocketAndWordsWait* this_thread_socket_wait() noexcept;
  /// create() without Result: nullptr and `why` on failure.
  static std::unique_ptr<SocketAndWordsWait> make(std::string& why);
  explicit SocketAndWordsWait(std::unique_ptr<Ring> ring) noexcept;
  [[nodiscard]] bool same_futex_wait(std::span<WakeWord* const> words,
                                     std::span<const std::uint32_t> seen) const noexcept;
  void arm_futex_wait(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen) noexcept;
  void arm_socket_poll(int fd) noexcept;
  void arm_socket_receives(int fd, std::size_t count, std::size_t datagram_bytes) noexcept;
  void on_receive_completion(std::size_t index, int result) noexcept;
  /// Cancels the receives still armed on `fd` and reaps until none is.
  void cancel_receives(int fd) noexcept;
  /// The futex request for this wait: the armed one if it still stands, else a new one.
  void prepare_futex_wait(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen) noexcept;
  /// Cancels the request tagged `tag` and reaps until it completed.
  void cancel(std::uint64_t tag) noexcept;
  /// Submits what was armed, sleeps for one completion at most `timeout_ns`
  /// and reaps every completion there is.
  bool enter(std::int64_t timeout_ns) noexcept;

  std::unique_ptr<Ring> ring_;
  bool futex_armed_ = false;
  int polled_fd_ = -1;  ///< The fd of the POLL_ADD in flight, -1: none.
  Woken woken_;
  /// One RECVMSG request's arguments; they must stay put until it completes.
  struct ReceiveSlot {
    msghdr message{};
    iovec vector{};
    sockaddr_in from{};
    bool armed = false;
  };
  std::array<ReceiveSlot, kMaxReceives> slots_{};
  std::size_t armed_receives_ = 0;
  int receive_fd_ = -1;                     ///< The fd of the receives armed last.
  std::vector<std::byte> receive_storage_;  ///< kMaxReceives buffers of receive_bytes_.
  std::size_t receive_bytes_ = 0;
  std::array<ReceivedDatagram, kMaxReceives> received_{};  ///< In completion order.
  std::size_t received_count_ = 0;
};

/// This thread's SocketAndWordsWait, made on first use; nullptr where
/// io_uring cannot wait on futex words (the caller waits on the words alone).
SocketAndWordsWait* this_thread_socket_wait() noexcept;

}  // namespace axon::futex
