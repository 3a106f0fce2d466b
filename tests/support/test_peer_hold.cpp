// axon_test_peer: hold, loan, node and hold-lock, the commands that hold
// something (samples, a loan, a node, the domain lock) until the test kills them.
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_peer.hpp"
#include "transports/shm/domain_lock.hpp"

namespace axon::test::peer {

int hold(const Args& args) {
  auto node = make_node(args, "peer-hold");
  auto sub = value_or_fail(node->subscribe<TestMessage>(args.str("topic"), {.depth = 64}));
  say("READY");
  const std::uint64_t count = args.num("count", 10);
  std::vector<axon::Sample<TestMessage>> held;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (held.size() < count && Clock::now() < deadline) {
    auto sample = sub->take();
    if (sample) {
      held.push_back(std::move(*sample));
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  say("HOLDING " + std::to_string(held.size()));
  sleep_forever();
}

int loan(const Args& args) {
  const auto [node, pub] = ready_publisher<TestMessage>(args, "peer-loan");
  const auto id = static_cast<std::uint32_t>(args.num("id", 1));
  const std::uint64_t count = args.num("publish", 0);
  for (std::uint64_t seq = 1; seq <= count; ++seq) {
    if (!publish_one(*pub, id, seq)) {
      fail("publish failed");
    }
  }
  auto kept = pub->loan();
  if (!kept) {
    fail(std::string(kept.error().message()));
  }
  say("LOANED");
  sleep_forever();
}

int node_only(const Args& args) {
  auto node = make_node(args, "peer-node");
  say("READY");
  sleep_forever();
}

/// Holds the domain lock at path=P (as DomainLock takes it) until killed.
int hold_lock(const Args& args) {
  axon::shm::DomainLock lock(args.str("path"), 0600);
  auto held = value_or_fail(lock.lock());
  say("LOCKED");
  sleep_forever();
}

}  // namespace axon::test::peer
