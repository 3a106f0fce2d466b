// axon_test_peer: what its commands share (test_peer.hpp).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/support/test_peer.hpp"

namespace axon::test::peer {

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

[[noreturn]] void fail(const std::string& what) {
  say("ERROR " + what);
  std::exit(2);
}

std::shared_ptr<axon::Node> make_node(const Args& args, const std::string& name) {
  axon::NodeOptions options;
  options.domain_id = static_cast<std::uint32_t>(args.num("domain"));
  options.liveness_period_ms = static_cast<std::uint32_t>(args.num("liveness_ms", options.liveness_period_ms));
  return value_or_fail(axon::Node::create(name, options));
}

[[noreturn]] void sleep_forever() {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

axon::SubscriberQos subscriber_qos(const Args& args, std::uint32_t default_depth) {
  axon::SubscriberQos qos;
  qos.depth = static_cast<std::uint32_t>(args.num("depth", default_depth));
  if (args.num("block", 0) != 0) {
    qos.overflow = axon::Overflow::kBlockPublisher;
    qos.block_timeout_ns = 10'000'000'000;
  }
  const std::string overflow = args.str("overflow", "");
  if (overflow == "default") {
    qos.overflow = axon::Overflow::kDefault;
  } else if (overflow == "drop-oldest") {
    qos.overflow = axon::Overflow::kDropOldest;
  } else if (overflow == "reject-newest") {
    qos.overflow = axon::Overflow::kRejectNewest;
  } else if (overflow == "latest-only") {
    qos.overflow = axon::Overflow::kLatestOnly;
  } else if (overflow == "block") {
    qos.overflow = axon::Overflow::kBlockPublisher;
  } else if (!overflow.empty()) {
    fail("unknown overflow " + overflow);
  }
  if (args.str("history") == "keep-all") {
    qos.history = axon::History::kKeepAll;
  }
  if (args.num("reliable", 0) != 0) {
    qos.reliability = axon::Reliability::kReliable;
  }
  if (args.values.contains("block_timeout_ms")) {
    qos.block_timeout_ns = static_cast<std::int64_t>(args.num("block_timeout_ms")) * 1'000'000;
  }
  qos.quarantine_after_ns = static_cast<std::int64_t>(args.num("quarantine_ms", 0)) * 1'000'000;
  return qos;
}

axon::PublishResult publish_one(axon::Publisher<TestMessage>& pub, std::uint32_t id, std::uint64_t seq) {
  for (;;) {
    auto loan = pub.loan();
    if (loan) {
      axon::test::fill(**loan, id, seq);
      return pub.publish(std::move(*loan));
    }
    if (loan.failed()) {
      return loan.error();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace axon::test::peer
