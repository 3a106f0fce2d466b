// axon_fanout_peer: one process of the many-subscriber tests (issue 15).
//   axon_fanout_peer domain=N topic=NAME subs=K expect=M [timeout_ms=T]
// Subscribes K times to `topic` (reliable, keep-all: the publisher waits for
// room, so every subscriber gets every message), prints "READY", then takes
// on all K, sleeping in a WaitSet while none has data, until each got M
// TestMessages intact and numbered 1..M in order, or T ms passed (default
// 20000). Prints "RESULT complete=C errors=E" (C: subscribers that got all
// M) and exits 0.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/test_messages.hpp"

namespace {

using axon::test::TestMessage;

[[noreturn]] void fail(const std::string& what) {
  std::printf("ERROR %s\n", what.c_str());
  std::fflush(stdout);
  std::exit(2);  // NOLINT(concurrency-mt-unsafe): the peer ends here
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string kv = argv[i];
    if (const auto eq = kv.find('='); eq != std::string::npos) {
      args[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  auto num = [&](const std::string& key, std::uint64_t fallback) {
    return args.contains(key) ? std::strtoull(args[key].c_str(), nullptr, 10) : fallback;
  };
  axon::NodeOptions options;
  options.domain_id = static_cast<std::uint32_t>(num("domain", 0));
  options.chunk_classes = {{.payload_bytes = 256, .count = 16}};  // subscribers publish nothing
  auto node = axon::Node::create("fanout-peer", options);
  if (!node) {
    fail(std::string(node.error().message()));
  }
  axon::SubscriberQos qos;
  qos.history = axon::History::kKeepAll;
  qos.reliability = axon::Reliability::kReliable;
  qos.block_timeout_ns = 10'000'000'000;
  std::vector<std::shared_ptr<axon::Subscriber<TestMessage>>> subs;
  axon::WaitSet waits;
  for (std::uint64_t k = 0; k < num("subs", 1); ++k) {
    auto sub = (*node)->subscribe<TestMessage>(args["topic"], qos);
    if (!sub) {
      fail(std::string(sub.error().message()));
    }
    if (auto attached = waits.attach(*sub); !attached) {
      fail(std::string(attached.error().message()));
    }
    subs.push_back(std::move(*sub));
  }
  std::printf("READY\n");
  std::fflush(stdout);
  const std::uint64_t expect = num("expect", 100);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(num("timeout_ms", 20000));
  std::vector<std::uint64_t> next(subs.size(), 1);
  std::uint64_t errors = 0;
  std::size_t complete = 0;
  while (complete < subs.size() && std::chrono::steady_clock::now() < deadline) {
    (void)waits.wait(std::chrono::milliseconds(10));  // a timeout is no error: the deadline decides
    for (std::size_t k = 0; k < subs.size(); ++k) {
      for (;;) {
        auto sample = subs[k]->take();
        if (!sample) {
          break;
        }
        const TestMessage& m = **sample;
        errors += axon::test::intact(m) && m.sequence == next[k] ? 0 : 1;
        next[k] = m.sequence + 1;
        complete += m.sequence == expect ? 1 : 0;
      }
    }
  }
  std::printf("RESULT complete=%zu errors=%llu\n", complete, static_cast<unsigned long long>(errors));
  std::fflush(stdout);
  return 0;
}
