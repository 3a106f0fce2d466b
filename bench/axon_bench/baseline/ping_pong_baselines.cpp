#include <arpa/inet.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "baseline/baselines.hpp"
#include "harness/pair_runner.hpp"
#include "src/base/words_and_fd_wait.hpp"

namespace axon_bench {
namespace {

/// Runs `ping(i)` (one round trip) in worker 0 and `pong(i)` (the answer)
/// in worker 1, timing every round trip in worker 0.
template <class Ping, class Pong>
CaseResult measure_round_trips(const PingPongSetup& setup, const std::string& transport, Ping ping, Pong pong) {
  SharedArray<std::int64_t> round_trips(setup.samples);
  Shared<PairControl> control;
  const std::uint64_t total = setup.warmup + setup.samples;
  PairJob job{.label = "baseline " + transport, .cpus = setup.cpus, .progress_total = setup.samples};
  job.worker[0] = [&](PairControl& c) {
    arrive_and_wait(c);
    for (std::uint64_t i = 0; i < total; ++i) {
      if (i == setup.warmup) {
        c.side[0].measure_begin = CpuTimes::now();
      }
      const std::int64_t start = now_ns();
      if (!ping(i)) {
        return fail(c, 0, transport + " ping: " + error_text(errno));
      }
      const std::int64_t end = now_ns();
      if (i >= setup.warmup) {
        const std::uint64_t k = i - setup.warmup;
        round_trips[k] = end - start;
        if ((k & 1023) == 0) {
          c.progress.store(k, std::memory_order_relaxed);  // read by the parent, for display only
        }
      }
    }
    c.side[0].measure_end = CpuTimes::now();
    return 0;
  };
  job.worker[1] = [&](PairControl& c) {
    arrive_and_wait(c);
    for (std::uint64_t i = 0; i < total; ++i) {
      if (i == setup.warmup) {
        c.side[1].measure_begin = CpuTimes::now();
      }
      if (!pong(i)) {
        return fail(c, 1, transport + " pong: " + error_text(errno));
      }
    }
    c.side[1].measure_end = CpuTimes::now();
    return 0;
  };
  run_pair_checked(job, *control, std::nullopt);
  CaseResult result;
  result.benchmark = "baseline";
  result.mode = "pingpong";
  result.transport = transport;
  result.serializer = "none";
  result.latency = summarize({round_trips.data(), round_trips.size()}).scaled(0.5);
  const SideReport& a = control->side[0];
  const auto wall_ns = static_cast<double>(a.measure_end.wall_ns - a.measure_begin.wall_ns);
  result.msgs_per_s = wall_ns > 0 ? 2.0 * static_cast<double>(setup.samples) * 1e9 / wall_ns : 0.0;
  record_pair_cpu(result, *control);
  return result;
}

/// The cache lines of the raw ping-pong: one written by each side.
struct PingPongLines {
  alignas(kCacheLine) std::atomic<std::uint64_t> ping{0};
  alignas(kCacheLine) std::atomic<std::uint64_t> pong{0};
};

struct FutexWords {
  alignas(kCacheLine) std::atomic<std::uint32_t> ping{0};
  alignas(kCacheLine) std::atomic<std::uint32_t> pong{0};
};
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t), "a futex word is 32 bits");

long futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value) noexcept {
  // Shared (not FUTEX_PRIVATE_FLAG): the waiter and the waker are different processes.
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, nullptr, nullptr, 0);
}

bool futex_signal(std::atomic<std::uint32_t>& word, std::uint32_t value) noexcept {
  word.store(value, std::memory_order_release);  // pairs with the acquire in futex_await()
  return futex(word, FUTEX_WAKE, 1) >= 0;
}

bool futex_await(std::atomic<std::uint32_t>& word, std::uint32_t value) noexcept {
  for (;;) {
    const std::uint32_t seen = word.load(std::memory_order_acquire);  // pairs with futex_signal()
    if (seen == value) {
      return true;
    }
    // Sleeps only while the word still holds `seen`; EAGAIN/EINTR: look again.
    if (futex(word, FUTEX_WAIT, seen) != 0 && errno != EAGAIN && errno != EINTR) {
      return false;
    }
  }
}

class FdPair {
 public:
  FdPair() = default;
  ~FdPair() {
    for (const int open_fd : fd) {
      if (open_fd >= 0) {
        ::close(open_fd);
      }
    }
  }
  FdPair(const FdPair&) = delete;
  FdPair& operator=(const FdPair&) = delete;
  int fd[2] = {-1, -1};
};

bool send_receive(int fd, char* buffer, std::size_t bytes) noexcept {
  return ::send(fd, buffer, bytes, 0) == static_cast<ssize_t>(bytes) &&
         ::recv(fd, buffer, bytes, 0) == static_cast<ssize_t>(bytes);
}

bool receive_send(int fd, char* buffer, std::size_t bytes) noexcept {
  return ::recv(fd, buffer, bytes, 0) == static_cast<ssize_t>(bytes) &&
         ::send(fd, buffer, bytes, 0) == static_cast<ssize_t>(bytes);
}

[[noreturn]] void throw_errno(const std::string& what) { throw std::runtime_error(what + ": " + error_text(errno)); }

}  // namespace

CaseResult measure_cacheline_pingpong(const PingPongSetup& setup) {
  Shared<PingPongLines> lines;
  // Each side spins on the other's line; a round trip moves two lines
  // between the cores, so half of it is one core-to-core transfer.
  auto result = measure_round_trips(
      setup, "cacheline",
      [&](std::uint64_t i) {
        // Release/acquire pair with the other side's load/store of the same line.
        lines->ping.store(i + 1, std::memory_order_release);
        while (lines->pong.load(std::memory_order_acquire) != i + 1) {
          cpu_relax();
        }
        return true;
      },
      [&](std::uint64_t i) {
        while (lines->ping.load(std::memory_order_acquire) != i + 1) {
          cpu_relax();
        }
        lines->pong.store(i + 1, std::memory_order_release);
        return true;
      });
  result.payload_bytes = sizeof(std::uint64_t);
  return result;
}

CaseResult measure_futex_pingpong(const PingPongSetup& setup) {
  Shared<FutexWords> words;
  auto result = measure_round_trips(
      setup, "futex",
      [&](std::uint64_t i) {
        const auto value = static_cast<std::uint32_t>(i + 1);
        return futex_signal(words->ping, value) && futex_await(words->pong, value);
      },
      [&](std::uint64_t i) {
        const auto value = static_cast<std::uint32_t>(i + 1);
        return futex_await(words->ping, value) && futex_signal(words->pong, value);
      });
  result.wait_strategy = "futex";
  result.payload_bytes = sizeof(std::uint32_t);
  return result;
}

CaseResult measure_uds_pingpong(const PingPongSetup& setup, std::size_t message_bytes) {
  FdPair sockets;
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sockets.fd) != 0) {
    throw_errno("socketpair(AF_UNIX, SOCK_SEQPACKET)");
  }
  std::vector<char> buffer(message_bytes, 'x');  // each worker writes its own copy
  auto result = measure_round_trips(
      setup, "uds", [&](std::uint64_t) { return send_receive(sockets.fd[0], buffer.data(), message_bytes); },
      [&](std::uint64_t) { return receive_send(sockets.fd[1], buffer.data(), message_bytes); });
  result.wait_strategy = "blocking-syscall";
  result.payload_bytes = message_bytes;
  result.mb_per_s = *result.msgs_per_s * static_cast<double>(message_bytes) / 1e6;
  return result;
}

namespace {

/// Two UDP sockets on 127.0.0.1 connected to each other. Throws.
void open_udp_pair(FdPair& sockets, std::size_t message_bytes) {
  if (message_bytes > 65'507) {
    throw std::invalid_argument("a UDP datagram carries at most 65507 bytes");
  }
  sockaddr_in address[2] = {};
  for (int i = 0; i < 2; ++i) {
    sockets.fd[i] = ::socket(AF_INET, SOCK_DGRAM, 0);
    if (sockets.fd[i] < 0) {
      throw_errno("socket(AF_INET, SOCK_DGRAM)");
    }
    address[i].sin_family = AF_INET;
    address[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address[i]);
    if (::bind(sockets.fd[i], reinterpret_cast<sockaddr*>(&address[i]), sizeof(address[i])) != 0 ||
        ::getsockname(sockets.fd[i], reinterpret_cast<sockaddr*>(&address[i]), &length) != 0) {
      throw_errno("bind to 127.0.0.1");
    }
  }
  for (int i = 0; i < 2; ++i) {
    if (::connect(sockets.fd[i], reinterpret_cast<sockaddr*>(&address[1 - i]), sizeof(address[1 - i])) != 0) {
      throw_errno("connect on 127.0.0.1");
    }
  }
}

/// The receiving thread of `udp-handoff`: takes `count` datagrams and hands
/// each to the worker's main thread by a futex (`handed` counts them).
class HandOffReceiver {
 public:
  HandOffReceiver(int fd, std::size_t bytes, std::uint64_t count)
      : buffer_(bytes), thread_([this, fd, bytes, count] {
          for (std::uint64_t i = 0; i < count; ++i) {
            if (::recv(fd, buffer_.data(), bytes, 0) != static_cast<ssize_t>(bytes)) {
              failed_.store(true, std::memory_order_relaxed);  // then the signal below wakes the main thread
              futex_signal(handed_, ~0U);
              return;
            }
            futex_signal(handed_, static_cast<std::uint32_t>(i + 1));
          }
        }) {}
  HandOffReceiver(const HandOffReceiver&) = delete;
  HandOffReceiver& operator=(const HandOffReceiver&) = delete;
  ~HandOffReceiver() { thread_.join(); }
  /// Until datagram `i` (0-based) was handed over; false when receiving failed.
  bool await(std::uint64_t i) noexcept {
    for (;;) {
      if (futex_await_any(handed_, static_cast<std::uint32_t>(i + 1)) || failed_.load(std::memory_order_relaxed)) {
        return !failed_.load(std::memory_order_relaxed);
      }
    }
  }

 private:
  /// Sleeps until `word` reached `value` (or the receiver failed).
  bool futex_await_any(std::atomic<std::uint32_t>& word, std::uint32_t value) noexcept {
    const std::uint32_t seen = word.load(std::memory_order_acquire);  // pairs with futex_signal()
    if (seen == value || failed_.load(std::memory_order_relaxed)) {
      return true;
    }
    futex(word, FUTEX_WAIT, seen);  // EAGAIN/EINTR: the caller looks again
    return false;
  }

  std::vector<char> buffer_;
  std::atomic<std::uint32_t> handed_{0};
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

}  // namespace

CaseResult measure_udp_pingpong(const PingPongSetup& setup, std::size_t message_bytes) {
  FdPair sockets;
  open_udp_pair(sockets, message_bytes);
  std::vector<char> buffer(message_bytes, 'x');
  auto result = measure_round_trips(
      setup, "udp", [&](std::uint64_t) { return send_receive(sockets.fd[0], buffer.data(), message_bytes); },
      [&](std::uint64_t) { return receive_send(sockets.fd[1], buffer.data(), message_bytes); });
  result.wait_strategy = "blocking-syscall";
  result.payload_bytes = message_bytes;
  result.mb_per_s = *result.msgs_per_s * static_cast<double>(message_bytes) / 1e6;
  return result;
}

CaseResult measure_udp_uring_pingpong(const PingPongSetup& setup, std::size_t message_bytes, UringWait how) {
  using axon::futex::WordsAndFdWait;
  if (auto probe = WordsAndFdWait::create(); !probe) {
    throw std::runtime_error("udp-uring: " + std::string(probe.error().message()));
  }
  FdPair sockets;
  open_udp_pair(sockets, message_bytes);
  struct IdleWords {  // watched by each waiter, never woken: the shared-memory side of such a wait
    axon::WakeWord ping;
    axon::WakeWord pong;
  };
  Shared<IdleWords> idle;
  std::vector<char> buffer(message_bytes, 'x');
  std::unique_ptr<WordsAndFdWait> waits[2];  // made in each worker (after the fork): a ring is per process
  auto receive = [&](int side) {
    if (!waits[side]) {
      auto created = WordsAndFdWait::create();
      if (!created) {
        return false;
      }
      waits[side] = std::move(*created);
    }
    const int fd = sockets.fd[side];
    axon::WakeWord* const words[] = {side == 0 ? &idle->ping : &idle->pong};
    const std::uint32_t seen[] = {words[0]->sequence.load(std::memory_order_acquire)};
    while (how == UringWait::kReceive) {  // the wake-up brings the datagram
      iovec vector{buffer.data(), buffer.size()};
      msghdr message{};
      message.msg_iov = &vector;
      message.msg_iovlen = 1;
      const auto received = waits[side]->wait_and_receive(words, seen, fd, std::span<msghdr>(&message, 1), -1);
      if (!received.completed.empty()) {
        return received.completed[0].size == message_bytes;  // the datagram's real length (MSG_TRUNC)
      }
    }
    for (;;) {
      if (::recv(fd, buffer.data(), message_bytes, MSG_DONTWAIT) == static_cast<ssize_t>(message_bytes)) {
        return true;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return false;
      }
      (void)waits[side]->wait(words, seen, fd, -1);  // the library's wait (src/words_and_fd_wait.hpp)
    }
  };
  auto result = measure_round_trips(
      setup, how == UringWait::kReceive ? "udp-uring-recv" : "udp-uring",
      [&](std::uint64_t) {
        return ::send(sockets.fd[0], buffer.data(), message_bytes, 0) == static_cast<ssize_t>(message_bytes) &&
               receive(0);
      },
      [&](std::uint64_t) {
        return receive(1) &&
               ::send(sockets.fd[1], buffer.data(), message_bytes, 0) == static_cast<ssize_t>(message_bytes);
      });
  result.wait_strategy = how == UringWait::kReceive ? "io_uring-recvmsg-and-futex" : "io_uring-poll-and-futex";
  result.payload_bytes = message_bytes;
  result.mb_per_s = *result.msgs_per_s * static_cast<double>(message_bytes) / 1e6;
  return result;
}

CaseResult measure_udp_handoff_pingpong(const PingPongSetup& setup, std::size_t message_bytes) {
  FdPair sockets;
  open_udp_pair(sockets, message_bytes);
  std::vector<char> buffer(message_bytes, 'x');
  const std::uint64_t total = setup.warmup + setup.samples;
  std::unique_ptr<HandOffReceiver> receivers[2];  // started in each worker (threads do not survive fork)
  auto handed = [&](int side, std::uint64_t i) {
    if (!receivers[side]) {
      receivers[side] = std::make_unique<HandOffReceiver>(sockets.fd[side], message_bytes, total);
    }
    const bool ok = receivers[side]->await(i);
    if (i + 1 == total || !ok) {
      receivers[side].reset();  // joins: it took its last datagram
    }
    return ok;
  };
  auto result = measure_round_trips(
      setup, "udp-handoff",
      [&](std::uint64_t i) {
        return ::send(sockets.fd[0], buffer.data(), message_bytes, 0) == static_cast<ssize_t>(message_bytes) &&
               handed(0, i);
      },
      [&](std::uint64_t i) {
        return handed(1, i) &&
               ::send(sockets.fd[1], buffer.data(), message_bytes, 0) == static_cast<ssize_t>(message_bytes);
      });
  result.wait_strategy = "blocking-syscall-then-futex-handoff";
  result.payload_bytes = message_bytes;
  result.mb_per_s = *result.msgs_per_s * static_cast<double>(message_bytes) / 1e6;
  return result;
}

}  // namespace axon_bench
