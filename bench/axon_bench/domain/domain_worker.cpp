// One process of a domain benchmark: its share of the nodes, each with the
// publishers and subscribers the ring gives it; then it sleeps on the phase
// word (no wake-up of its own while the domain idles) and does what the
// phase asks.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "domain/domain_run.hpp"
#include <axon/axon.hpp>

namespace axon_bench {
namespace {

struct Beat {
  std::uint64_t n = 0;
};

constexpr auto kConnectPoll = std::chrono::milliseconds(5);
constexpr auto kDetectPoll = std::chrono::microseconds(500);
constexpr std::int64_t kConnectTimeoutNs = 120'000'000'000;
constexpr std::int64_t kDetectTimeoutNs = 30'000'000'000;

/// An endpoint of ours and whether its peer is in the process that is killed.
template <class Port>
struct Link {
  std::shared_ptr<Port> port;
  bool to_victim = false;
};

struct ProcessNodes {
  std::vector<std::shared_ptr<axon::Node>> nodes;
  std::vector<Link<axon::Publisher<Beat>>> pubs;
  std::vector<Link<axon::Subscriber<Beat>>> subs;
};

std::string topic_name(std::uint32_t t) { return "domain/t" + std::to_string(t); }

void wait_phase_at_least(DomainControl& control, std::uint32_t phase) {
  for (;;) {
    // Acquire pairs with the release store in set_domain_phase().
    const std::uint32_t now = control.phase.load(std::memory_order_acquire);
    if (now >= phase) {
      return;
    }
    // Shared (not private) futex: the parent maps the word too.
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&control.phase), FUTEX_WAIT, now, nullptr, nullptr, 0);
  }
}

/// Creates this process's nodes and endpoints; an error text or "".
std::string create_nodes(const DomainShape& shape, std::uint32_t index, ProcessNodes& out) {
  if (shape.nodes == 0 || shape.processes == 0) {
    return "a domain needs nodes and processes";
  }
  const std::uint32_t victim = victim_of(shape);
  std::vector<std::uint32_t> mine;
  for (std::uint32_t n = 0; n < shape.nodes; ++n) {
    if (shape.process_of(n) == index) {
      mine.push_back(n);
    }
  }
  for (const std::uint32_t n : mine) {
    axon::NodeOptions options;
    options.domain_id = shape.domain_id;
    options.liveness_period_ms = shape.liveness_ms;
    const std::uint32_t own_topics = (shape.topics + shape.nodes - 1) / shape.nodes;
    options.chunk_classes = {{.payload_bytes = 64, .count = 8 + 4 * own_topics}};
    auto node = axon::Node::create("domain_n" + std::to_string(n), options);
    if (!node) {
      return "Node::create of node " + std::to_string(n) + ": " + std::string(node.error().message());
    }
    out.nodes.push_back(std::move(*node));
  }
  for (std::size_t k = 0; k < mine.size(); ++k) {
    axon::Node& node = *out.nodes[k];
    for (std::uint32_t t = 0; t < shape.topics; ++t) {
      if (shape.publisher_of(t) == mine[k]) {
        auto pub = node.advertise<Beat>(topic_name(t));
        if (!pub) {
          return "advertise " + topic_name(t) + ": " + std::string(pub.error().message());
        }
        out.pubs.push_back({std::move(*pub), shape.process_of(shape.subscriber_of(t)) == victim});
      }
      if (shape.subscriber_of(t) == mine[k]) {
        auto sub = node.subscribe<Beat>(topic_name(t));
        if (!sub) {
          return "subscribe " + topic_name(t) + ": " + std::string(sub.error().message());
        }
        out.subs.push_back({std::move(*sub), shape.process_of(shape.publisher_of(t)) == victim});
      }
    }
  }
  return "";
}

/// Polls until `done` holds; false after `timeout_ns`.
template <class Done, class Period>
bool poll_until(Done done, Period period, std::int64_t timeout_ns) {
  const std::int64_t deadline = now_ns() + timeout_ns;
  while (!done()) {
    if (now_ns() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(period);
  }
  return true;
}

int run_nodes(const DomainShape& shape, DomainShared& shared, std::uint32_t index, bool victim) {
  DomainControl& control = *shared.control;
  DomainProcessReport& report = shared.reports[index];
  ProcessNodes nodes;
  if (std::string error = create_nodes(shape, index, nodes); !error.empty()) {
    return report.error.set(error);
  }
  report.nodes = static_cast<std::uint32_t>(nodes.nodes.size());
  control.created.fetch_add(1, std::memory_order_release);  // pairs with the parent's acquire
  const bool linked = poll_until(
      [&] {
        for (const auto& p : nodes.pubs) {
          if (p.port->subscriber_count() < 1) {
            return false;
          }
        }
        for (const auto& s : nodes.subs) {
          if (s.port->publisher_count() < 1) {
            return false;
          }
        }
        return true;
      },
      kConnectPoll, kConnectTimeoutNs);
  if (!linked) {
    return report.error.set("its endpoints did not all connect within 120 s");
  }
  report.connected_ns = now_ns();
  control.connected.fetch_add(1, std::memory_order_release);  // pairs with the parent's acquire

  wait_phase_at_least(control, kMeasuring);
  report.idle_begin = CpuTimes::now();
  wait_phase_at_least(control, kKilled);
  report.idle_end = CpuTimes::now();
  if (control.phase.load(std::memory_order_acquire) == kKilled && !victim) {
    bool any = false;
    const bool gone = poll_until(
        [&] {
          for (const auto& p : nodes.pubs) {
            any = any || p.to_victim;
            if (p.to_victim && p.port->subscriber_count() != 0) {
              return false;
            }
          }
          for (const auto& s : nodes.subs) {
            any = any || s.to_victim;
            if (s.to_victim && s.port->publisher_count() != 0) {
              return false;
            }
          }
          return true;
        },
        kDetectPoll, kDetectTimeoutNs);
    if (!gone) {
      return report.error.set("still linked to the killed process 30 s after the SIGKILL");
    }
    report.detected_ns = any ? now_ns() : 0;
    control.detected.fetch_add(1, std::memory_order_release);  // pairs with the parent's acquire
  }
  wait_phase_at_least(control, kStopping);
  return 0;
}

}  // namespace

int run_domain_worker(const DomainShape& shape, DomainShared& shared, std::uint32_t index, bool victim) {
  DomainProcessReport& report = shared.reports[index];
  if (!victim) {
    report.pid = ::getpid();
    return run_nodes(shape, shared, index, false);
  }
  // The parent kills the grandchild that holds the nodes; this worker
  // itself ends normally, so the process group sees no failure.
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    return report.error.set("fork of the victim's process failed");
  }
  if (child == 0) {
    report.pid = ::getpid();
    ::_exit(run_nodes(shape, shared, index, true));
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  return killed || (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? 0 : 1;
}

void set_domain_phase(DomainControl& control, DomainPhase phase) noexcept {
  control.phase.store(phase, std::memory_order_release);  // pairs with wait_phase_at_least()
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&control.phase), FUTEX_WAKE, 1 << 30, nullptr, nullptr, 0);
}

std::int64_t proc_cpu_ns(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) {
    return -1;
  }
  char buf[1024] = {};
  const std::size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  const char* p = n > 0 ? std::strrchr(buf, ')') : nullptr;  // the name may hold spaces
  if (p == nullptr) {
    return -1;
  }
  unsigned long long utime = 0;
  unsigned long long stime = 0;
  // Fields 3.. after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime.
  if (std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2) {
    return -1;
  }
  const long ticks = ::sysconf(_SC_CLK_TCK);
  return static_cast<std::int64_t>((utime + stime) * (1'000'000'000ULL / static_cast<unsigned long long>(ticks)));
}

}  // namespace axon_bench
