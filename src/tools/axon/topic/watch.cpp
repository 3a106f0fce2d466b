#include "src/tools/axon/topic/watch.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include "axon/wait_set.hpp"
#include "src/tools/axon/command.hpp"

namespace axon::tools {
namespace {

// Set by the handler, read by the loop. Lock-free (checked below), so safe in a signal handler; relaxed: the
// flag carries no data, only "stop soon".
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

// Static: a C-linkage name ignores the unnamed namespace, and a program linking the tools (the topic tests) may
// have a request_stop of its own.
extern "C" {
static void request_stop(int /*signal*/) { g_stop.store(true, std::memory_order_relaxed); }
}

struct sigaction g_previous_int {};
struct sigaction g_previous_term {};

/// The subscriber's queue: deep enough for bursts between two turns of the loop, dropping the oldest when the
/// tool falls behind (a watching tool never slows a publisher down).
constexpr std::uint32_t kQueueDepth = 256;
/// How long one wait of the loop (or for a publisher) lasts at most: how soon a signal is noticed.
constexpr auto kPollSlice = std::chrono::milliseconds(100);

std::chrono::nanoseconds seconds(double s) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(s));
}

/// "0.3", "10": a number of seconds as the user wrote it.
std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", s);
  return text;
}

}  // namespace

/// A check of a number option: `holds(value)`, else "<value> is <wanted>".
CLI::Validator number_check(bool (*holds)(double), const std::string& wanted) {
  return {[holds, wanted](std::string& text) -> std::string {
            double value = 0;
            if (!CLI::detail::lexical_cast(text, value) || !holds(value)) {
              return text + " is not " + wanted;
            }
            return {};
          },
          wanted};
}

void add_watch_options(CLI::App& command, WatchOptions& options) {
  const CLI::Validator positive = number_check([](double v) { return v > 0; }, "a number above 0");
  command.add_option("topic", options.topic, "The topic")->required();
  command.add_option("--duration", options.duration_s, "Stop after this many seconds (from the first publisher)")
      ->check(positive);
  command.add_option("--count", options.count, "Stop after this many messages")->check(positive);
  command
      .add_option("--wait", options.wait_s,
                  "Wait at most this many seconds for the topic's first publisher (default: without end); exit "
                  "status 1 when none came")
      ->check(number_check([](double v) { return v >= 0; }, "a number of 0 or more"));
}

StopOnSignals::StopOnSignals() {
  g_stop.store(false, std::memory_order_relaxed);
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a wait in progress returns early
  ::sigaction(SIGINT, &action, &g_previous_int);
  ::sigaction(SIGTERM, &action, &g_previous_term);
}

StopOnSignals::~StopOnSignals() {
  ::sigaction(SIGINT, &g_previous_int, nullptr);
  ::sigaction(SIGTERM, &g_previous_term, nullptr);
}

bool StopOnSignals::requested() noexcept { return g_stop.load(std::memory_order_relaxed); }

Result<Watch> open_watch(const GlobalOptions& globals, const WatchOptions& options) {
  NodeOptions node_options;
  node_options.domain_id = globals.domain_id;
  // It loans nothing: the smallest pool a node can have.
  node_options.chunk_classes = {ChunkClassConfig{.payload_bytes = 256, .count = 1}};
  node_options.pool_publishers = 1;
  auto node = Node::create("axon-cli-" + std::to_string(::getpid()), node_options);
  if (!node) {
    return node.error();
  }
  const AnySubscriptionOptions subscribe{
      .wait_for_publisher = {},
      .qos = SubscriberQos{.history = History::kKeepLast, .depth = kQueueDepth, .overflow = Overflow::kDropOldest}};
  const auto start = std::chrono::steady_clock::now();
  const bool forever = options.wait_s < 0;
  const auto deadline = start + seconds(forever ? 0.0 : options.wait_s);
  for (;;) {
    // In slices, so that Ctrl-C ends the wait.
    AnySubscriptionOptions slice = subscribe;
    const auto left = deadline - std::chrono::steady_clock::now();
    slice.wait_for_publisher =
        forever ? std::chrono::nanoseconds(kPollSlice)
                : std::max(std::chrono::nanoseconds(1), std::min<std::chrono::nanoseconds>(kPollSlice, left));
    auto subscribed = (*node)->subscribe_any(options.topic, slice);
    if (subscribed) {
      return Watch{.node = std::move(*node), .subscription = std::move(*subscribed)};
    }
    const bool timed_out = subscribed.error().code() == ErrorCode::kTimeout;
    if (!timed_out) {
      return subscribed.error();
    }
    if (StopOnSignals::requested()) {
      return Error(ErrorCode::kTimeout, "stopped before topic '" + options.topic + "' had a publisher");
    }
    if (!forever && std::chrono::steady_clock::now() >= deadline) {
      return Error(ErrorCode::kTimeout, "topic '" + options.topic + "' of domain " + std::to_string(globals.domain_id) +
                                            " had no publisher within " + seconds_text(options.wait_s) +
                                            " s (--wait): check the name and the domain (--domain, AXON_DOMAIN), "
                                            "or start its publisher");
    }
  }
}

std::uint64_t run_watch(Watch& watch, const WatchOptions& options,
                        const std::function<void(const Sample<Bytes>&)>& on_message,
                        const std::function<void()>& on_second) {
  using Clock = std::chrono::steady_clock;
  Subscriber<Bytes>& subscriber = *watch.subscription.subscriber;
  WaitSet waits;
  const bool can_wait = waits.attach(watch.subscription.subscriber).ok();
  const auto start = Clock::now();
  const auto end = options.duration_s > 0 ? start + seconds(options.duration_s) : Clock::time_point::max();
  auto next_second = start + std::chrono::seconds(1);
  std::uint64_t handed = 0;
  while (!StopOnSignals::requested()) {
    // At most a queue's worth per turn, so that a publisher faster than the printing still lets the clock,
    // --duration and Ctrl-C be looked at.
    for (std::uint32_t taken = 0; taken < kQueueDepth; ++taken) {
      auto sample = subscriber.take();
      if (!sample) {
        break;  // nothing queued (or a rejected message, counted by the subscriber)
      }
      on_message(*sample);
      ++handed;
      if (options.count != 0 && handed >= options.count) {
        return handed;
      }
    }
    const auto now = Clock::now();
    if (now >= end) {
      break;
    }
    if (on_second && now >= next_second) {
      on_second();
      next_second += std::chrono::seconds(1);
    }
    const auto until = std::min({end, on_second ? next_second : Clock::time_point::max(), now + kPollSlice});
    const auto slice = std::chrono::duration_cast<std::chrono::nanoseconds>(until - now);
    if (slice <= std::chrono::nanoseconds::zero()) {
      continue;  // a second or the end is due now (a negative wait would have no timeout)
    }
    if (can_wait) {
      (void)waits.wait(slice);
    } else {
      std::this_thread::sleep_for(slice);
    }
  }
  return handed;
}

int report_failure(const Error& error) {
  std::fprintf(stderr, "axon: %s\n", std::string(error.message()).c_str());
  return kExitFailed;
}

}  // namespace axon::tools
