// The subscriber peer of the node tests over RDMA (two_hosts.hpp): this
// binary exec'd again as RdmaNodeDataPeer.Subscribes, a node of host b that
// subscribes one topic with the QoS it is given, checks every message and
// reports what it took and what its queue dropped.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <thread>

#include "axon/axon.hpp"
#include "tests/unit/rdma/two_hosts.hpp"

namespace axon::rdma_test {
namespace {

std::uint64_t number(const char* name) { return std::strtoull(env(name).c_str(), nullptr, 10); }

SubscriberQos qos_named(const std::string& name, std::uint32_t depth) {
  if (name == "reject_newest") {
    return SubscriberQos{.history = History::kKeepAll, .depth = depth, .overflow = Overflow::kRejectNewest};
  }
  if (name == "keep_last") {
    return SubscriberQos{.history = History::kKeepLast, .depth = depth, .overflow = Overflow::kDropOldest};
  }
  return SubscriberQos{.depth = depth, .reliability = Reliability::kReliable, .block_timeout_ns = 2'000'000'000};
}

/// What the peer saw; printed as "WORD got=.. full=.. ..." (two_hosts.hpp).
struct Seen {
  std::uint64_t got = 0;
  std::uint64_t full = 0;
  std::uint64_t oldest = 0;
  std::uint64_t bad = 0;
  std::uint64_t gaps = 0;
  std::uint64_t back = 0;
  std::uint64_t last = 0;

  void take(std::uint64_t sequence, bool ok) noexcept {
    ++got;
    bad += ok ? 0 : 1;
    gaps += sequence > last + 1 ? 1 : 0;
    back += sequence <= last ? 1 : 0;
    last = sequence;
  }
  void say(const char* word, const Node& node) const {
    const NetworkCounters c = node.network_counters();
    std::printf(
        "%s got=%llu full=%llu oldest=%llu bad=%llu gaps=%llu back=%llu last=%llu rdma=%llu exhausted=%llu "
        "spun=%llu\n",
        word, static_cast<unsigned long long>(got), static_cast<unsigned long long>(full),
        static_cast<unsigned long long>(oldest), static_cast<unsigned long long>(bad),
        static_cast<unsigned long long>(gaps), static_cast<unsigned long long>(back),
        static_cast<unsigned long long>(last), static_cast<unsigned long long>(c.rdma_messages_received),
        static_cast<unsigned long long>(c.rdma_loans_exhausted),
        static_cast<unsigned long long>(c.rdma_completions_on_waiting_threads));
    std::fflush(stdout);
  }
};

/// Sequence and soundness of a 16 MiB - n frame (node_data_test.cpp).
std::pair<std::uint64_t, bool> check_frame(const Sample<Slice<std::uint8_t>>& frame) {
  const std::uint64_t sequence = frame.info().sequence;
  const std::span<const std::uint8_t> bytes = *frame;
  bool ok = bytes.size() == kLarge - sequence;  // each a different length
  for (std::size_t i = 0; ok && i < bytes.size(); i += 4093) {
    ok = bytes[i] == static_cast<std::uint8_t>(sequence + i);
  }
  ok = ok && !bytes.empty() && bytes.back() == static_cast<std::uint8_t>(sequence + bytes.size() - 1);
  return {sequence, ok};
}
std::pair<std::uint64_t, bool> check_block(const Sample<Block>& sample) { return {sample->sequence, intact(*sample)}; }

template <class T, class Check>
void receive(Node& node, const std::string& topic, const SubscriberQos& qos, Check check) {
  const std::uint64_t count = number("AXON_RDMA_DATA_COUNT");
  const std::uint64_t slow = number("AXON_RDMA_DATA_SLOW");
  auto sub = node.subscribe<T>(topic, qos);
  ASSERT_TRUE(sub.ok()) << sub.error().message();
  if (env("AXON_RDMA_DATA_WAIT_PUBLISHER") == "1") {
    ASSERT_TRUE(eventually(kWait, [&] { return (*sub)->publisher_count() > 0; })) << "no publisher of " << topic;
  }
  // Busy-spinning: between takes the thread waits in a WaitSet that polls the
  // node's completion queue itself (RdmaWaitSource), never sleeping.
  const bool busy_spin = env("AXON_RDMA_DATA_BUSY_SPIN") == "1";
  WaitSet spinning(WaitStrategy::busy_spin());
  if (busy_spin) {
    ASSERT_TRUE(spinning.attach(*sub));
  }
  std::printf("READY\n");
  std::fflush(stdout);
  Seen seen;
  const auto deadline = Clock::now() + milliseconds(120000);
  while (Clock::now() < deadline && (count == 0 || seen.got + seen.full + seen.oldest < count)) {
    auto sample = (*sub)->take();
    const QueueCounters queue = (*sub)->counters().queue;
    const bool dropped = queue.dropped_full != seen.full || queue.dropped_oldest != seen.oldest;
    seen.full = queue.dropped_full;
    seen.oldest = queue.dropped_oldest;
    if (sample) {
      const auto [sequence, ok] = check(*sample);
      seen.take(sequence, ok);
      if (seen.got <= slow) {
        std::this_thread::sleep_for(milliseconds(1));
      }
    } else if (!dropped && busy_spin) {
      (void)spinning.wait(milliseconds(100));
    } else if (!dropped) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    if (count == 0 && (sample || dropped)) {
      seen.say("AT", node);
    }
  }
  seen.say("GOT", node);
  std::this_thread::sleep_for(milliseconds(60000));  // lives until the test kills it
}

// AXON_RDMA_DATA_*: CONFIG, SHM (host b's directory), NODE, TOPIC, COUNT,
// SLOW, QOS, DEPTH, WAIT_PUBLISHER, BUSY_SPIN (two_hosts.hpp, SubscriberPeer). Prints
// READY once subscribed, then "GOT ..." when COUNT messages were taken or
// dropped by its queue (COUNT 0: "AT ..." after each change), then lives
// until killed. rdma/frames is a Slice<std::uint8_t> topic, others Block.
TEST(RdmaNodeDataPeer, Subscribes) {
  const std::string config = env("AXON_RDMA_DATA_CONFIG");
  if (config.empty()) {
    GTEST_SKIP() << "the peer process of the RDMA node tests (they run it as a child process)";
  }
  auto node = Node::create(env("AXON_RDMA_DATA_NODE"), options_for(config, env("AXON_RDMA_DATA_SHM")));
  ASSERT_TRUE(node.ok()) << node.error().message();
  const std::string topic = env("AXON_RDMA_DATA_TOPIC");
  const SubscriberQos qos =
      qos_named(env("AXON_RDMA_DATA_QOS"), static_cast<std::uint32_t>(number("AXON_RDMA_DATA_DEPTH")));
  if (topic == "rdma/frames") {
    receive<Slice<std::uint8_t>>(**node, topic, qos, check_frame);
  } else {
    receive<Block>(**node, topic, qos, check_block);
  }
}

}  // namespace
}  // namespace axon::rdma_test
