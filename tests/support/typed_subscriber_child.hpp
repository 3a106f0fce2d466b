// A child process that subscribes a topic as T and prints each message it takes, for the process tests of the
// tools that publish (`axon topic pub`, `axon play`): says READY, prints "MSG " and describe(sample) per
// message, exits 0 after `count` messages (2 when they did not come in time; with 0 it runs until SIGTERM and
// exits 0), printing "DONE rejected=N" before.
#pragma once

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"

namespace axon::test {

/// Set by SIGTERM in a child (relaxed: only "stop soon"; lock-free, so the handler may set it).
inline std::atomic<bool> g_child_stop_requested{false};
extern "C" {
static inline void request_child_stop(int /*signal*/) { g_child_stop_requested.store(true, std::memory_order_relaxed); }
}

struct SubscriberChildOptions {
  std::uint32_t domain = 0;
  std::string node_name = "test_subscriber";
  std::uint32_t depth = 64;
  std::chrono::milliseconds give_up{20'000};  ///< For `count` messages.
  std::chrono::milliseconds poll{2};          ///< Sleep between empty takes.
};

template <class T>
ChildProcess typed_subscriber_child(SubscriberChildOptions options, std::string topic, std::uint64_t count,
                                    std::function<std::string(const Sample<T>&)> describe) {
  return ChildProcess::fork_and_run([options, topic, count, describe]() -> int {
    std::signal(SIGTERM, request_child_stop);
    auto node = Node::create(options.node_name, NodeOptions{.domain_id = options.domain});
    if (!node) {
      std::printf("ERROR %s\n", std::string(node.error().message()).c_str());
      return 1;
    }
    auto sub = (*node)->template subscribe<T>(topic, SubscriberQos{.depth = options.depth});
    if (!sub) {
      std::printf("ERROR %s\n", std::string(sub.error().message()).c_str());
      return 1;
    }
    std::printf("READY\n");
    std::fflush(stdout);
    const auto give_up = std::chrono::steady_clock::now() +
                         (count == 0 ? std::chrono::milliseconds(std::chrono::hours(1)) : options.give_up);
    std::uint64_t taken = 0;
    while (std::chrono::steady_clock::now() < give_up && (count == 0 || taken < count) &&
           !g_child_stop_requested.load(std::memory_order_relaxed)) {
      if (auto sample = (*sub)->take()) {
        std::printf("MSG %s\n", describe(*sample).c_str());
        std::fflush(stdout);
        ++taken;
      } else {
        std::this_thread::sleep_for(options.poll);
      }
    }
    std::printf("DONE rejected=%llu\n", static_cast<unsigned long long>((*sub)->counters().rejected));
    std::fflush(stdout);
    return taken == count || count == 0 ? 0 : 2;
  });
}

}  // namespace axon::test
