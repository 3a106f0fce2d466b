// Idler: carries out a WaitStrategy while an executor or wait set finds
// nothing to do: spin, then yield, then sleep on futex words.
#pragma once

#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <span>

#include "axon/transport.hpp"
#include "axon/wait_strategy.hpp"
#include "src/cpu_relax.hpp"
#include "src/futex.hpp"
#include "src/socket_and_words_wait.hpp"

namespace axon::detail {

/// Longest single sleep: a safety net, so a wait never depends on one wake
/// alone (the registry wakes sleepers when a publisher appears or goes).
inline constexpr std::int64_t kMaxSleepNs = 50'000'000;
/// Longest sleep when some subscription has no futex word (or more than
/// futex_waitv watches): those are polled.
inline constexpr std::int64_t kPollSleepNs = 1'000'000;

/// One per waiting thread; not thread-safe. Does not allocate.
class Idler {
 public:
  explicit Idler(WaitStrategy strategy) noexcept : strategy_(strategy) {}

  /// Work was found: the next idle period starts with spinning again.
  void reset() noexcept { idle_since_ns_ = -1; }

  /// One idle step at time `now`, never past `wake_at_ns`. Spins or yields
  /// once, or registers as a waiter on `words`, checks `ready()` (the
  /// protocol of futex::Waiter: never sleep without that check) and sleeps
  /// unless it is true. Returns true when it slept (a wake or a timeout).
  /// With a `receiver` (a subscriber whose messages arrive on a socket this
  /// process reads), a sleep watches that socket too and reads it on waking:
  /// one wake-up per message instead of the receive thread's and then ours.
  template <class Ready>
  bool step(std::span<WakeWord* const> words, bool poll_only, std::int64_t now, std::int64_t wake_at_ns, Ready&& ready,
            SocketReceiver* receiver = nullptr) noexcept {
    if (idle_since_ns_ < 0) {
      idle_since_ns_ = now;
    }
    const std::int64_t idle_ns = now - idle_since_ns_;
    switch (strategy_.kind()) {
      case WaitStrategy::Kind::kBusySpin: cpu_relax(); return false;
      case WaitStrategy::Kind::kSpinYieldSleep:
        if (idle_ns < strategy_.spin_ns()) {
          cpu_relax();
          return false;
        }
        if (idle_ns < strategy_.spin_ns() + strategy_.yield_ns()) {
          ::sched_yield();
          return false;
        }
        break;
      case WaitStrategy::Kind::kBlocking: break;
    }
    std::int64_t timeout_ns = std::min(wake_at_ns - now, kMaxSleepNs);
    if (poll_only) {
      timeout_ns = std::min(timeout_ns, kPollSleepNs);
    }
    if (timeout_ns <= 0) {
      return false;
    }
    if (receiver != nullptr && !words.empty()) {
      if (futex::SocketAndWordsWait* both = futex::this_thread_socket_wait()) {
        // A one-datagram message comes with the wake-up (no receive call
        // after it); a longer one is read after the wake-up by one recvmmsg,
        // which usually finds all its fragments there (reading the first in
        // the wait measured slower for 2 KiB: the second one then often
        // costs a wake-up of its own).
        const bool read_in_wait = receiver->expected_datagrams() == 1;
        futex::SocketAndWordsWait::Received received;
        futex::SocketAndWordsWait::Woken woken;
        {
          futex::Waiter waiter(words);
          if (ready()) {
            return false;
          }
          receiver->begin_wait();
          if (read_in_wait) {
            received = both->wait_and_receive(words, waiter.seen(), receiver->receive_fd(), 1,
                                              receiver->max_datagram_bytes(), timeout_ns);
          } else {
            woken = both->wait(words, waiter.seen(), receiver->receive_fd(), timeout_ns);
          }
          receiver->end_wait();
        }  // waiters counted down first: what the receiver publishes wakes nobody here
        if (!received.datagrams.empty()) {
          receiver->receive_datagrams(received.datagrams, received.all_read);
        } else if (woken.readable) {
          receiver->receive_ready();
        }
        return true;
      }
    }
    futex::Waiter waiter(words);
    if (ready()) {
      return false;
    }
    if (words.empty()) {
      const timespec pause{.tv_sec = 0, .tv_nsec = static_cast<long>(timeout_ns)};
      ::nanosleep(&pause, nullptr);
    } else {
      waiter.wait(timeout_ns);
    }
    return true;
  }

 private:
  WaitStrategy strategy_;
  std::int64_t idle_since_ns_ = -1;
};

}  // namespace axon::detail
