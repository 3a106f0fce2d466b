// axon_topic_publisher: the publisher the `axon topic` tests watch (public API only).
//   axon_topic_publisher domain=N rate=HZ [count=N] [prefix=P] [wait_subscribers=1]
// Publishes a Protobuf and a FlatBuffers Heartbeat, a raw Pose and a described raw Odometry
// (tests/support/topic_messages.hpp) on their four topics at `rate` messages a second each (rate=0: none, the topics
// stay quiet), prints "READY" once the publishers exist, and runs until SIGINT or SIGTERM, then leaves the domain as
// usual (exit status 0). For the record tests: `prefix` replaces the topics' "watch/"; `wait_subscribers=1` waits
// (at most 20 s) until every publisher has a subscriber connected and prints "SUBSCRIBED"; `count` publishes that
// many messages per topic, then prints "PUBLISHED pb=N fb=N raw=N described=N" (the publishes that succeeded) and
// stays until the signal.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "axon/axon.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "tests/support/topic_messages.hpp"

namespace {

std::atomic<bool> g_stop{false};  // relaxed: only "stop soon"; lock-free, so the handler may set it
extern "C" void request_stop(int /*signal*/) { g_stop.store(true, std::memory_order_relaxed); }

std::string argument(int argc, char** argv, std::string_view key, std::string fallback) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.size() > key.size() && arg.substr(0, key.size()) == key && arg[key.size()] == '=') {
      return std::string(arg.substr(key.size() + 1));
    }
  }
  return fallback;
}

template <class T>
T or_exit(axon::Result<T> result) {
  if (!result) {
    std::printf("ERROR %s\n", std::string(result.error().message()).c_str());
    std::exit(2);
  }
  return std::move(*result);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace axon::test::topics;
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  const auto domain = static_cast<std::uint32_t>(std::stoul(argument(argc, argv, "domain", "0")));
  const double rate = std::stod(argument(argc, argv, "rate", "50"));
  const std::uint64_t count = std::stoull(argument(argc, argv, "count", "0"));
  const std::string prefix = argument(argc, argv, "prefix", "watch/");
  const bool wait_subscribers = argument(argc, argv, "wait_subscribers", "0") == "1";
  const auto topic = [&prefix](std::string_view name) { return prefix + std::string(name.substr(6)); };
  {
    auto node = or_exit(axon::Node::create("topic-publisher", axon::NodeOptions{.domain_id = domain}));
    auto pb = or_exit(node->advertise<axon::schemas::pb::Heartbeat>(topic(kProtobufTopic)));
    auto fb = or_exit(node->advertise<axon::schemas::fb::Heartbeat>(topic(kFlatBuffersTopic)));
    auto raw = or_exit(node->advertise<Pose>(topic(kRawTopic)));
    auto described = or_exit(node->advertise<Odometry>(topic(kDescribedTopic)));
    std::printf("READY\n");
    std::fflush(stdout);
    if (wait_subscribers) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (pb->subscriber_count() == 0 || fb->subscriber_count() == 0 || raw->subscriber_count() == 0 ||
             described->subscriber_count() == 0) {
        if (std::chrono::steady_clock::now() > give_up || g_stop.load(std::memory_order_relaxed)) {
          std::printf("ERROR no subscriber within 20 s\n");
          return 3;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      std::printf("SUBSCRIBED\n");
      std::fflush(stdout);
    }
    while (rate <= 0 && !g_stop.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(rate > 0 ? 1.0 / rate : 1.0));
    auto next = std::chrono::steady_clock::now();
    axon::schemas::pb::Heartbeat heartbeat;
    std::uint64_t published[4] = {};
    for (std::uint64_t sequence = kFirstSequence; !g_stop.load(std::memory_order_relaxed); ++sequence) {
      if (count != 0 && sequence - kFirstSequence == count) {
        std::printf("PUBLISHED pb=%llu fb=%llu raw=%llu described=%llu\n",
                    static_cast<unsigned long long>(published[0]), static_cast<unsigned long long>(published[1]),
                    static_cast<unsigned long long>(published[2]), static_cast<unsigned long long>(published[3]));
        std::fflush(stdout);
        while (!g_stop.load(std::memory_order_relaxed)) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        break;
      }
      fill_heartbeat(heartbeat, sequence);
      published[0] += pb->publish(heartbeat) ? 1 : 0;
      if (auto loan = fb->loan_builder(256)) {
        auto root = build_heartbeat(loan->builder(), sequence);
        published[1] += fb->publish(std::move(*loan), root) ? 1 : 0;
      }
      published[2] += raw->publish(pose_for(sequence)) ? 1 : 0;
      published[3] += described->publish(odometry_for(sequence)) ? 1 : 0;
      next += period;
      std::this_thread::sleep_until(next);
    }
  }
  std::printf("LEFT\n");
  return 0;
}
