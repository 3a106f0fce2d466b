// axon-net-delay: delays a network namespace's outgoing packets for the delay
// and reorder faults of `axon-bench chaos` (docs/reliability.md, "Network
// faults") on kernels without netem. axon-bench starts it inside a virtual
// host (`ip netns exec NS axon-net-delay --queue 19 --delay-ms 20 ...`); it
// binds NFQUEUE queue 19 there, receives each packet's metadata (never its
// bytes) and gives the packet its NF_ACCEPT verdict when delay_plan.hpp says
// it goes. It prints READY once bound, so the iptables rule that sends packets
// to it goes in only then. At SIGTERM or SIGINT it lets every packet it holds
// go at once, prints its counts (held, released, dropped by the kernel) and
// exits 0.
//
// A program of its own, not an axon-bench command: it is the only user of
// libnetfilter_queue (axon-bench builds and runs without it; its NFQUEUE check
// then says what is missing), and it is one small single-threaded loop for the
// length of a fault, not a copy of axon-bench with every command.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>  // NF_ACCEPT
#include <poll.h>
#include <pthread.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "net_delay/delay_plan.hpp"
#include "net_delay/delayer_protocol.hpp"
#include "tests/support/common/error_text.hpp"

namespace axon_bench {
namespace {

/// The socket buffer the kernel queues packet messages in (SO_RCVBUFFORCE): with metadata only, about 100 bytes each.
constexpr unsigned kSocketBufferBytes = 16U << 20;

std::int64_t now_ns() noexcept {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return (static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000) + t.tv_nsec;
}

struct DelayerCounts {
  std::uint64_t received = 0;          ///< Packets the queue gave the delayer.
  std::uint64_t held = 0;              ///< Of those, held for later.
  std::uint64_t at_once = 0;           ///< Of those, let go at once (reorder's overtaking ones).
  std::uint64_t released = 0;          ///< Verdicts given (held and at once).
  std::uint64_t released_at_exit = 0;  ///< Held packets let go early because the delayer was told to stop.
  std::size_t most_held = 0;           ///< The most held at one time.
  std::uint64_t verdict_errors = 0;    ///< Verdicts the kernel refused (the packet was gone).
  std::uint64_t socket_overruns = 0;   ///< recv() said ENOBUFS: messages the socket could not take.
};

/// The kernel's own counts of queue `queue` in this namespace (/proc/net/netfilter/nfnetlink_queue: packets dropped
/// because the queue was full, and because the socket was).
std::string kernel_drops(int queue) {
  std::ifstream file("/proc/net/netfilter/nfnetlink_queue");
  for (std::string line; std::getline(file, line);) {
    std::istringstream fields(line);
    long number = -1;
    long portid = 0;
    long total = 0;
    long mode = 0;
    long range = 0;
    long queue_full = 0;
    long socket_full = 0;
    if (fields >> number >> portid >> total >> mode >> range >> queue_full >> socket_full && number == queue) {
      return fmt::format("{} (queue full) and {} (socket full)", queue_full, socket_full);
    }
  }
  return "unknown (no line for the queue in /proc/net/netfilter/nfnetlink_queue)";
}

/// One bound NFQUEUE queue and the packets it holds.
class Delayer {
 public:
  Delayer(int queue, const DelayParams& params) : queue_(queue), plan_(params) {}
  ~Delayer() {
    if (queue_handle_ != nullptr) {
      ::nfq_destroy_queue(queue_handle_);
    }
    if (handle_ != nullptr) {
      ::nfq_close(handle_);
    }
  }
  Delayer(const Delayer&) = delete;
  Delayer& operator=(const Delayer&) = delete;

  /// Binds the queue. Returns "" or what failed and what to do.
  std::string open() {
    handle_ = ::nfq_open();
    if (handle_ == nullptr) {
      return fmt::format(
          "nfq_open: {}: the kernel has no nfnetlink_queue (needs CONFIG_NETFILTER_NETLINK_QUEUE, or `modprobe "
          "nfnetlink_queue`)",
          axon::test::error_text(errno));
    }
    queue_handle_ = ::nfq_create_queue(handle_, static_cast<std::uint16_t>(queue_), &Delayer::on_packet, this);
    if (queue_handle_ == nullptr) {
      return fmt::format("cannot bind NFQUEUE queue {}: {} (another process in this network namespace bound it?)",
                         queue_, axon::test::error_text(errno));
    }
    if (::nfq_set_mode(queue_handle_, NFQNL_COPY_META, 0) < 0) {
      return fmt::format("nfq_set_mode(NFQNL_COPY_META): {}", axon::test::error_text(errno));
    }
    if (::nfq_set_queue_maxlen(queue_handle_, kDelayerMaxQueued) < 0) {
      return fmt::format("nfq_set_queue_maxlen({}): {}", kDelayerMaxQueued, axon::test::error_text(errno));
    }
    // GSO packets whole: the delayer never looks at the bytes, the kernel need not segment them for it.
    (void)::nfq_set_queue_flags(queue_handle_, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO);
    (void)::nfnl_rcvbufsiz(::nfq_nfnlh(handle_), kSocketBufferBytes);
    return "";
  }

  /// Runs until `signal_fd` is readable, then lets everything go. Returns the counts.
  DelayerCounts run(int signal_fd) {
    const int fd = ::nfq_fd(handle_);
    pollfd fds[2] = {{.fd = fd, .events = POLLIN, .revents = 0}, {.fd = signal_fd, .events = POLLIN, .revents = 0}};
    for (;;) {
      timespec timeout{};
      const timespec* wait = nullptr;  // nothing held: until a packet or a signal comes
      if (!held_.empty()) {
        const std::int64_t left = std::max<std::int64_t>(held_.next_release_ns() - now_ns(), 0);
        timeout = {.tv_sec = left / 1'000'000'000, .tv_nsec = left % 1'000'000'000};
        wait = &timeout;
      }
      if (::ppoll(fds, 2, wait, nullptr) < 0 && errno != EINTR) {
        std::fprintf(stderr, "axon-net-delay: ppoll: %s\n", axon::test::error_text(errno).c_str());
        break;
      }
      if ((fds[0].revents & POLLIN) != 0) {
        receive(fd);
      }
      release_due();
      if ((fds[1].revents & POLLIN) != 0) {
        break;
      }
    }
    // Told to stop: the rule is gone by now, so what is in the socket is the last of it.
    receive(fd);
    std::vector<std::uint32_t> ids;
    held_.take_all(ids);
    counts_.released_at_exit = ids.size();
    accept(ids);
    return counts_;
  }

  [[nodiscard]] int queue() const noexcept { return queue_; }

 private:
  static int on_packet(nfq_q_handle* /*queue*/, nfgenmsg* /*message*/, nfq_data* packet, void* self) {
    const nfqnl_msg_packet_hdr* header = ::nfq_get_msg_packet_hdr(packet);
    if (header != nullptr) {
      static_cast<Delayer*>(self)->arrived(ntohl(header->packet_id));
    }
    return 0;
  }

  void arrived(std::uint32_t id) {
    ++counts_.received;
    const std::int64_t now = now_ns();
    const std::int64_t release = plan_.release_ns(now);
    if (release <= now) {
      ++counts_.at_once;
      accept_one(id);
      return;
    }
    ++counts_.held;
    held_.hold(id, release);
    counts_.most_held = std::max(counts_.most_held, held_.size());
  }

  /// Hands every message waiting in the socket to on_packet().
  void receive(int fd) {
    for (;;) {
      const ssize_t n = ::recv(fd, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
      if (n > 0) {
        (void)::nfq_handle_packet(handle_, buffer_.data(), static_cast<int>(n));
      } else if (n < 0 && errno == ENOBUFS) {
        ++counts_.socket_overruns;  // the kernel's count says how many packets it dropped for it
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        return;  // EAGAIN: all read
      }
    }
  }

  void release_due() {
    due_.clear();
    held_.take_due(now_ns(), due_);
    accept(due_);
  }

  void accept(const std::vector<std::uint32_t>& ids) {
    for (const std::uint32_t id : ids) {
      accept_one(id);
    }
  }

  void accept_one(std::uint32_t id) {
    if (::nfq_set_verdict(queue_handle_, id, NF_ACCEPT, 0, nullptr) < 0) {
      ++counts_.verdict_errors;
    } else {
      ++counts_.released;
    }
  }

  int queue_;
  DelayPlan plan_;
  HeldPackets held_;
  std::vector<std::uint32_t> due_;
  DelayerCounts counts_;
  nfq_handle* handle_ = nullptr;
  nfq_q_handle* queue_handle_ = nullptr;
  std::vector<char> buffer_ = std::vector<char>(std::size_t{1} << 16);
};

int run(int argc, char** argv) {
  CLI::App app{
      "axon-net-delay: delays this network namespace's packets that an iptables NFQUEUE rule sends to its queue, "
      "for axon-bench chaos's delay and reorder faults. Prints READY once bound; SIGTERM lets every held packet go, "
      "prints the counts and exits 0."};
  int queue = kDelayerQueue;
  DelayParams params;
  app.add_option("--queue", queue, "The NFQUEUE queue number to bind")->check(CLI::Range(0, 65535));
  app.add_option("--delay-ms", params.delay_ms, "Each packet's delay")->required()->check(CLI::NonNegativeNumber);
  app.add_option("--jitter-ms", params.jitter_ms, "+- this much, uniform per packet (delay)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--immediate-percent", params.immediate_percent,
                 "This share of the packets goes at once, overtaking the delayed ones (reorder)")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--seed", params.seed, "Seeds the draws (jitter, which packets go at once)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (params.jitter_ms > params.delay_ms) {
    std::fprintf(stderr, "axon-net-delay: --jitter-ms (%g) must not exceed --delay-ms (%g)\n", params.jitter_ms,
                 params.delay_ms);
    return 2;
  }

  // Signals before the queue: a SIGTERM that comes early must still let the held packets go.
  sigset_t stop{};
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  if (::pthread_sigmask(SIG_BLOCK, &stop, nullptr) != 0) {
    std::fprintf(stderr, "axon-net-delay: pthread_sigmask: %s\n", axon::test::error_text(errno).c_str());
    return 1;
  }
  const int signal_fd = ::signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd < 0) {
    std::fprintf(stderr, "axon-net-delay: signalfd: %s\n", axon::test::error_text(errno).c_str());
    return 1;
  }
  Delayer delayer(queue, params);
  if (const std::string error = delayer.open(); !error.empty()) {
    std::fprintf(stderr, "axon-net-delay: %s\n", error.c_str());
    return 1;
  }
  std::printf("%s queue %d\n", kDelayerReady, queue);
  std::fflush(stdout);

  const DelayerCounts c = delayer.run(signal_fd);
  fmt::print(
      "{} queue {}: {} packets, {} held (at most {} at once), {} sent at once; {} released ({} of them early, at "
      "exit), {} verdicts refused; dropped by the kernel: {}; {} socket overruns\n",
      kDelayerCounts, queue, c.received, c.held, c.most_held, c.at_once, c.released, c.released_at_exit,
      c.verdict_errors, kernel_drops(queue), c.socket_overruns);
  std::fflush(stdout);
  ::close(signal_fd);
  return 0;
}

}  // namespace
}  // namespace axon_bench

int main(int argc, char** argv) {
  try {
    return axon_bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "axon-net-delay: %s\n", e.what());
    return 1;
  }
}
