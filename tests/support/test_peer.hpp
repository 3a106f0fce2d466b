// axon_test_peer: the other process of multi-process tests (test_peer.cpp
// reads its command line and lists the commands). What its commands share:
// the key=value arguments, the lines it prints, and the set-up of its node and
// endpoints. Shared by test_peer*.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "axon/axon.hpp"
#include "tests/support/test_messages.hpp"

namespace axon::test::peer {

using Clock = std::chrono::steady_clock;

struct Args {
  std::map<std::string, std::string> values;
  [[nodiscard]] std::string str(const std::string& key, const std::string& fallback = "") const {
    auto it = values.find(key);
    return it == values.end() ? fallback : it->second;
  }
  [[nodiscard]] std::uint64_t num(const std::string& key, std::uint64_t fallback = 0) const {
    auto it = values.find(key);
    return it == values.end() ? fallback : std::strtoull(it->second.c_str(), nullptr, 10);
  }
};

/// Prints one line on stdout and flushes it (tests read it through a pipe).
void say(const std::string& line);

/// Prints "ERROR what" and exits with status 2.
[[noreturn]] void fail(const std::string& what);

/// The value of `result`; the peer fails with the error when there is none.
template <class T>
T value_or_fail(axon::Result<T> result) {
  if (!result) {
    fail(std::string(result.error().message()));
  }
  return std::move(*result);
}

/// Node `name` with domain=N and liveness_ms=N.
std::shared_ptr<axon::Node> make_node(const Args& args, const std::string& name);

/// Until the test kills the peer.
[[noreturn]] void sleep_forever();

/// The subscriber QoS of the arguments (test_peer.cpp lists the keys).
axon::SubscriberQos subscriber_qos(const Args& args, std::uint32_t default_depth);

/// Polls publisher_count() (which connects to new publishers) until it
/// reaches `count`, then prints "LINKED".
template <class T>
void wait_for_publishers(axon::Subscriber<T>& sub, std::uint64_t count) {
  if (count == 0) {
    return;
  }
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (sub.publisher_count() < count) {
    if (Clock::now() > deadline) {
      fail("timed out waiting for publishers");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  say("LINKED");
}

template <class T>
void wait_for_subscribers(axon::Publisher<T>& pub, std::uint64_t count) {
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (pub.subscriber_count() < count) {
    if (Clock::now() > deadline) {
      fail("timed out waiting for subscribers");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// Loans (waiting while the pool is exhausted), fills message `seq` of
/// publisher `id` and publishes it.
axon::PublishResult publish_one(axon::Publisher<TestMessage>& pub, std::uint32_t id, std::uint64_t seq);

template <class T>
struct ReadyPublisher {
  std::shared_ptr<axon::Node> node;
  std::shared_ptr<axon::Publisher<T>> pub;
};

/// Node `name`, its publisher of topic=T (with `qos` when given, else the
/// QoS the config gives the topic), "READY", then wait_subs=N subscribers
/// (default 1).
template <class T>
ReadyPublisher<T> ready_publisher(const Args& args, const std::string& name,
                                  const std::optional<axon::PublisherQos>& qos = std::nullopt) {
  std::shared_ptr<axon::Node> node = make_node(args, name);
  auto pub = value_or_fail(qos ? node->advertise<T>(args.str("topic"), *qos) : node->advertise<T>(args.str("topic")));
  say("READY");
  wait_for_subscribers(*pub, args.num("wait_subs", 1));
  return {.node = std::move(node), .pub = std::move(pub)};
}

// The commands, one family a file.
int publish(const Args& args);       // test_peer_publish.cpp
int spam(const Args& args);          // test_peer_publish.cpp
int subscribe(const Args& args);     // test_peer_subscribe.cpp
int other_type(const Args& args);    // test_peer_subscribe.cpp
int wait_on_word(const Args& args);  // test_peer_wait.cpp
int hold(const Args& args);          // test_peer_hold.cpp
int loan(const Args& args);          // test_peer_hold.cpp
int node_only(const Args& args);     // test_peer_hold.cpp
int hold_lock(const Args& args);     // test_peer_hold.cpp
int fb_publish(const Args& args);    // test_peer_schemas.cpp
int pb_publish(const Args& args);    // test_peer_schemas.cpp
int fb_garbage(const Args& args);    // test_peer_schemas.cpp
int pb_garbage(const Args& args);    // test_peer_schemas.cpp

}  // namespace axon::test::peer
