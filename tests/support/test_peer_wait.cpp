// axon_test_peer: wait, a subscriber that sleeps on its wake word.
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "src/base/futex.hpp"
#include "tests/support/test_peer.hpp"

namespace axon::test::peer {

namespace {

const char* name_of(axon::futex::WaitResult result) {
  switch (result) {
    case axon::futex::WaitResult::kWoken: return "woken";
    case axon::futex::WaitResult::kTimedOut: return "timed-out";
    case axon::futex::WaitResult::kInterrupted: return "interrupted";
  }
  return "unknown";
}

}  // namespace

/// A subscriber that sleeps on its wake word. First takes take_first=K
/// messages by polling (printing "GOT seq"); then, rounds=R times: counts
/// itself as a waiter, and unless has_data() prints "WAITING r" and sleeps
/// up to wait_ms (default 30 s), printing "WOKE r <woken|timed-out|...>";
/// then takes what is queued ("GOT seq" each) and prints
/// "STATE r publishers_lost=.. publishers=..". With until=N it goes on with
/// more rounds until it took N messages in all (after take_first).
int wait_on_word(const Args& args) {
  auto node = make_node(args, "peer-wait");
  auto sub = value_or_fail(node->subscribe<TestMessage>(args.str("topic"), subscriber_qos(args, 16)));
  axon::WakeWord* word = sub->wake_word();
  if (word == nullptr) {
    fail("the transport has no wake word");
  }
  say("READY");
  wait_for_publishers(*sub, args.num("wait_pubs", 0));
  std::uint64_t taken = 0;
  auto drain = [&] {
    for (auto sample = sub->take(); sample; sample = sub->take()) {
      say("GOT " + std::to_string((**sample).sequence));
      ++taken;
    }
  };
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  for (std::uint64_t got = 0; got < args.num("take_first", 0);) {
    if (Clock::now() > deadline) {
      fail("timed out taking the first messages");
    }
    if (auto sample = sub->take()) {
      say("GOT " + std::to_string((**sample).sequence));
      ++got;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  const auto wait_ns = static_cast<std::int64_t>(args.num("wait_ms", 30000)) * 1'000'000;
  const std::uint64_t until = args.num("until", 0);
  for (std::uint64_t round = 1; until != 0 ? taken < until : round <= args.num("rounds", 1); ++round) {
    const std::string r = std::to_string(round);
    {
      axon::WakeWord* const words[] = {word};
      axon::futex::Waiter waiter(words);
      if (!sub->has_data()) {
        say("WAITING " + r);
        say("WOKE " + r + " " + name_of(waiter.wait(wait_ns)));
      }
    }
    drain();
    const axon::SubscriberCounters c = sub->counters();
    say("STATE " + r + " publishers_lost=" + std::to_string(c.publishers_lost) +
        " publishers=" + std::to_string(sub->publisher_count()));
  }
  return 0;
}

}  // namespace axon::test::peer
