// UdpWaitSource: UDP's WaitSource. A thread waiting for a subscriber of this
// host sleeps on the participant's data socket too and receives what wakes
// it as the participant's thread would: one wake-up per message instead of
// two (docs/design/udp-transport.md, "One wake-up per message").
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "axon/transport.hpp"
#include "transports/udp/datagram_wait.hpp"

namespace axon::udp {

/// The receive path a waiting thread feeds (the participant's).
class WaitingReceiver {
 public:
  /// The socket was readable: reads and delivers what is there (through
  /// shared memory, as the participant's thread would), unless another
  /// thread is receiving right now.
  virtual void receive_ready() noexcept = 0;
  /// Delivers datagrams a waiter read from the socket itself. `all_read`:
  /// every receive the waiter armed got one, so more may be queued; the
  /// receiver reads on while a message is incomplete.
  virtual void receive_datagrams(std::span<const ReceivedDatagram> datagrams, bool all_read) noexcept = 0;

 protected:
  WaitingReceiver() = default;
  ~WaitingReceiver() = default;
  WaitingReceiver(const WaitingReceiver&) = default;
  WaitingReceiver& operator=(const WaitingReceiver&) = default;
};

/// Thread safety: sleep() and after_sleep() from any threads at once;
/// socket_is_leased() from the participant's thread; note_message_datagrams()
/// from whichever thread receives.
class UdpWaitSource final : public WaitSource {
 public:
  /// `fd`: the data socket; `datagram_bytes`: the longest datagram accepted
  /// (a waiter reads into buffers of this size; a longer one arrives cut).
  UdpWaitSource(int fd, std::size_t datagram_bytes, WaitingReceiver& receiver) noexcept
      : fd_(fd), datagram_bytes_(datagram_bytes), receiver_(receiver) {}

  Slept sleep(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen,
              std::int64_t timeout_ns) noexcept override;
  void after_sleep() noexcept override;

  /// Whether the socket is the waiters' now: one sleeps on it, or the last
  /// one woke less than a millisecond ago. The participant's thread leaves
  /// it out of its poll() meanwhile (and looks again every millisecond).
  [[nodiscard]] bool socket_is_leased(std::int64_t now_ns) const noexcept;
  /// Datagrams of the message completed last: a waiter reads a one-datagram
  /// message in its wait, a longer one after it.
  void note_message_datagrams(std::uint32_t count) noexcept {
    last_message_datagrams_.store(count, std::memory_order_relaxed);  // a hint: any value is safe
  }

 private:
  int fd_;
  std::size_t datagram_bytes_;
  WaitingReceiver& receiver_;
  std::atomic<int> waiters_{0};                  ///< Asleep on the socket now.
  std::atomic<std::int64_t> lease_until_ns_{0};  ///< The socket stays theirs until then.
  std::atomic<std::uint32_t> last_message_datagrams_{1};
};

}  // namespace axon::udp
