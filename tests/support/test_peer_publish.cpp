// axon_test_peer: publish and spam, the commands that publish TestMessages.
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "tests/support/test_peer.hpp"

namespace axon::test::peer {

/// Publishes count=N messages (sequence 1..N) once wait_subs subscribers are
/// connected; with then_count=M it then waits for then_wait_subs subscribers
/// (a transient-local late joiner counts once its history was handed over)
/// and publishes M more. durability=D makes it transient-local (last D).
int publish(const Args& args) {
  axon::PublisherQos qos;
  if (const std::uint64_t depth = args.num("durability", 0); depth != 0) {
    qos.durability = axon::Durability::kTransientLocal;
    qos.durability_depth = static_cast<std::uint32_t>(depth);
  }
  const auto [node, pub] = ready_publisher<TestMessage>(args, "peer-pub", qos);
  const auto id = static_cast<std::uint32_t>(args.num("id", 1));
  const std::uint64_t count = args.num("count", 1000);
  const std::uint64_t interval_us = args.num("interval_us", 0);
  std::uint64_t dropped = 0;
  auto send = [&](std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t seq = first; seq <= last; ++seq) {
      auto status = publish_one(*pub, id, seq);
      if (!status) {
        fail(std::string(status.error().message()));
      }
      dropped += status->dropped;
      if (interval_us != 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(interval_us));
      }
    }
  };
  send(1, count);
  say("PUBLISHED " + std::to_string(count) + " dropped=" + std::to_string(dropped));
  if (const std::uint64_t more = args.num("then_count", 0); more != 0) {
    wait_for_subscribers(*pub, args.num("then_wait_subs", 1));
    send(count + 1, count + more);
    say("PUBLISHED_MORE " + std::to_string(more) + " dropped=" + std::to_string(dropped));
  }
  // Stay a moment so subscribers can map our pool and drain their queues.
  std::this_thread::sleep_for(std::chrono::milliseconds(args.num("linger_ms", 500)));
  return 0;
}

int spam(const Args& args) {
  const auto [node, pub] = ready_publisher<TestMessage>(args, "peer-spam");
  const auto id = static_cast<std::uint32_t>(args.num("id", 1));
  for (std::uint64_t seq = 1;; ++seq) {
    if (!publish_one(*pub, id, seq)) {
      fail("publish failed");
    }
    if (seq == 100) {
      say("PUBLISHING");
    }
  }
}

}  // namespace axon::test::peer
