#include "transports/udp/udp_wait_source.hpp"

#include "src/base/clock.hpp"
#include "src/base/words_and_fd_wait.hpp"

namespace axon::udp {
namespace {

/// How long the data socket stays with the waiters after the last one woke:
/// long enough for a callback and the next wait, short enough that a busy
/// waiter does not hold up other topics' messages for long.
constexpr std::int64_t kSocketLeaseNs = 1'000'000;

/// A waiting thread's buffers, and what its last sleep() left for its
/// after_sleep() (the same thread, right after).
struct ThisThread {
  DatagramWait datagrams;
  std::span<const ReceivedDatagram> read;  ///< Empty: the socket was readable, nothing read yet.
  bool all_read = false;
};

ThisThread& this_thread() noexcept {
  thread_local ThisThread self;
  return self;
}

}  // namespace

WaitSource::Slept UdpWaitSource::sleep(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen,
                                       std::int64_t timeout_ns) noexcept {
  futex::WordsAndFdWait* wait = futex::this_thread_words_and_fd_wait();
  if (wait == nullptr) {
    return Slept::kDidNotSleep;  // no io_uring futex waits here: the participant's thread keeps the socket
  }
  ThisThread& self = this_thread();
  // A one-datagram message comes with the wake-up (no receive call after
  // it); a longer one is read after the wake-up by one recvmmsg, which
  // usually finds all its fragments there (reading the first in the wait
  // measured slower for 2 KiB: the second one then often costs a wake-up
  // of its own).
  const bool read_in_wait = last_message_datagrams_.load(std::memory_order_relaxed) == 1;
  // Relaxed: the participant thread's view only decides whether it polls the
  // socket too; both reading it is correct (the receiver serializes them).
  waiters_.fetch_add(1, std::memory_order_relaxed);
  bool arrived = false;
  if (read_in_wait) {
    const DatagramWait::Received got =
        self.datagrams.wait_and_receive(*wait, words, seen, fd_, 1, datagram_bytes_, timeout_ns);
    self.read = got.datagrams;
    self.all_read = got.all_read;
    arrived = !got.datagrams.empty();
  } else {
    self.read = {};
    arrived = wait->wait(words, seen, fd_, timeout_ns).readable;
  }
  lease_until_ns_.store(monotonic_now_ns() + kSocketLeaseNs, std::memory_order_relaxed);
  waiters_.fetch_sub(1, std::memory_order_relaxed);
  return arrived ? Slept::kArrived : Slept::kWoken;
}

void UdpWaitSource::after_sleep() noexcept {
  ThisThread& self = this_thread();
  if (!self.read.empty()) {
    receiver_.receive_datagrams(self.read, self.all_read);
    self.read = {};
  } else {
    receiver_.receive_ready();
  }
}

bool UdpWaitSource::socket_is_leased(std::int64_t now_ns) const noexcept {
  // Relaxed: a stale view costs one needless wake-up or a millisecond.
  return waiters_.load(std::memory_order_relaxed) > 0 || now_ns < lease_until_ns_.load(std::memory_order_relaxed);
}

}  // namespace axon::udp
