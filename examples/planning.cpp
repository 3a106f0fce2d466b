// axon-example-planning: subscribes to "perception/objects" with a callback,
// run by an executor that sleeps until perception publishes; reads each
// object list in place in the publisher's shared memory, and prints once a
// second how many arrived, how late, and how many were lost.
//
//   AXON_DOMAIN=7 axon-example-planning --duration 10
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "axon/axon.hpp"
#include "example_support.hpp"
#include "object_list.hpp"

namespace {

using examples::ObjectList;

constexpr const char* kTopic = "perception/objects";
/// 320 ms of scans at 100 Hz: room for a planning cycle that runs late.
constexpr std::uint32_t kQueueDepth = 32;
constexpr std::int64_t kReportPeriodNs = examples::kNsPerSecond;

/// Counts messages missing between consecutive sequence numbers of each
/// publisher. The first message of a publisher counts nothing: it may have
/// started before we subscribed.
class LossCounter {
 public:
  /// Returns how many messages of this publisher went missing before `sequence`.
  std::uint64_t on_message(std::uint64_t publisher_id, std::uint64_t sequence) {
    for (Entry& entry : entries_) {
      if (entry.publisher_id == publisher_id) {
        const std::uint64_t gap = sequence > entry.last_sequence + 1 ? sequence - entry.last_sequence - 1 : 0;
        entry.last_sequence = sequence;
        return gap;
      }
    }
    // A new publisher: forget the one we heard from least recently.
    entries_[next_victim_] = Entry{publisher_id, sequence};
    next_victim_ = (next_victim_ + 1) % entries_.size();
    return 0;
  }

 private:
  struct Entry {
    std::uint64_t publisher_id = 0;  // 0 is never a live publisher's id
    std::uint64_t last_sequence = 0;
  };
  std::array<Entry, 8> entries_{};
  std::size_t next_victim_ = 0;
};

/// What arrived during one report period.
struct Window {
  std::vector<std::int64_t> latencies_ns;
  std::uint64_t lost = 0;
  std::uint32_t last_target_count = 0;

  /// Nearest-rank percentile (0 < p <= 1); reorders latencies_ns.
  double percentile_us(double p) {
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(latencies_ns.size())));
    const auto nth = latencies_ns.begin() + static_cast<std::ptrdiff_t>(std::max<std::size_t>(rank, 1) - 1);
    std::nth_element(latencies_ns.begin(), nth, latencies_ns.end());
    return static_cast<double>(*nth) / 1e3;
  }
};

void print_window(Window& window, std::int64_t period_ns, std::uint32_t publishers) {
  const double rate = static_cast<double>(window.latencies_ns.size()) * 1e9 / static_cast<double>(period_ns);
  if (window.latencies_ns.empty()) {
    std::printf("planning: %5.1f msg/s  waiting for %s (%u publishers)\n", rate, kTopic, publishers);
    return;
  }
  const double p50 = window.percentile_us(0.50);
  const double p99 = window.percentile_us(0.99);
  std::printf("planning: %5.1f msg/s  latency p50 %.1f us  p99 %.1f us  targets %u  lost %llu\n", rate, p50, p99,
              window.last_target_count, static_cast<unsigned long long>(window.lost));
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // one line at a time, also into a pipe
  const examples::CommandLine cmd = examples::parse_command_line(
      argc, argv, "Subscribes to perception/objects and prints rate, latency and losses once a second.");
  examples::install_stop_handlers();

  auto node = axon::Node::create("planning");
  if (!node) {
    examples::report_error("planning: cannot join the axon domain", node.error());
    return 1;
  }
  const std::int64_t start_ns = examples::monotonic_now_ns();
  Window window;
  window.latencies_ns.reserve(1024);
  LossCounter losses;
  std::uint64_t received = 0;
  std::uint64_t lost = 0;
  std::uint64_t malformed = 0;
  // Runs on the executor's thread (this one, inside spin_for()).
  auto on_objects = [&](const axon::Sample<ObjectList>& sample) {
    const axon::SampleInfo& info = sample.info();
    const std::int64_t latency_ns = examples::monotonic_now_ns() - info.publish_time_ns;
    const std::uint64_t gap = losses.on_message(info.publisher_id, info.sequence);
    ++received;
    lost += gap;
    window.lost += gap;
    window.latencies_ns.push_back(latency_ns);
    // The list is read where perception wrote it; a planner would use
    // sample->targets[0 .. target_count) right here.
    if (sample->target_count > ObjectList::kMaxTargets) {
      ++malformed;
      return;
    }
    window.last_target_count = sample->target_count;
  };
  auto subscription = node->subscribe<ObjectList>(kTopic, {.depth = kQueueDepth}, on_objects);
  if (!subscription) {
    examples::report_error("planning: cannot subscribe to perception/objects", subscription.error());
    return 1;
  }
  // Blocking: the thread sleeps on the subscriber's futex word between scans
  // and perception's publish() wakes it, so the latency printed is axon's
  // wake-up, not a polling period.
  axon::SingleThreadedExecutor executor({.wait_strategy = axon::WaitStrategy::blocking()});
  if (auto added = executor.add(*subscription); !added) {
    examples::report_error("planning: cannot add the subscription to the executor", added.error());
    return 1;
  }
  std::printf("planning: listening on %s (queue depth %u) on domain %u\n", kTopic, kQueueDepth, node->domain_id());

  const std::int64_t deadline_ns = examples::deadline_ns(cmd, start_ns);
  std::int64_t window_start_ns = start_ns;
  for (;;) {
    const std::int64_t now_ns = examples::monotonic_now_ns();
    if (now_ns - window_start_ns >= kReportPeriodNs) {
      print_window(window, now_ns - window_start_ns, (*subscription)->subscriber().publisher_count());
      window.latencies_ns.clear();
      window.lost = 0;
      window_start_ns = now_ns;
    }
    if (examples::stop_requested() || now_ns >= deadline_ns) {
      break;
    }
    // Callbacks run in here until the next report is due (or a stop request,
    // seen within that period at most).
    const std::int64_t until_ns = std::min(window_start_ns + kReportPeriodNs, deadline_ns);
    if (auto spun = executor.spin_for(std::chrono::nanoseconds(until_ns - now_ns)); !spun) {
      examples::report_error("planning: the executor failed", spun.error());
      return 1;
    }
  }

  const double elapsed_s = static_cast<double>(examples::monotonic_now_ns() - start_ns) / 1e9;
  std::printf("planning: received %llu object lists in %.2f s, lost %llu, malformed %llu\n",
              static_cast<unsigned long long>(received), elapsed_s, static_cast<unsigned long long>(lost),
              static_cast<unsigned long long>(malformed));
  if (received == 0) {
    std::fprintf(stderr,
                 "planning: received nothing on %s; is axon-example-perception running with the same "
                 "AXON_DOMAIN?\n",
                 kTopic);
    return 1;
  }
  return malformed == 0 ? 0 : 1;
}
