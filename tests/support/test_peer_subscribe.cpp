// axon_test_peer: subscribe, which takes and checks TestMessages, and
// other-type, a subscription of another type under the same topic name.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>

#include "tests/support/test_peer.hpp"

namespace axon::test::peer {

/// Takes expect=N messages and checks each one: intact, and in order per
/// publisher (lossless=1: no gaps, the first one is first_seq). Options:
/// wait_pubs=P prints "LINKED" once connected to P publishers; sleep_us=U
/// sleeps after each message (a slow subscriber); report_every=K prints
/// "PROGRESS n" every K messages; extra_ms=E keeps taking for E ms after the
/// N-th message, so that an unexpected extra one is counted.
/// Prints "RESULT received=.. publishers=.. errors=.. first=.. last=..",
/// then "COUNTERS ..." (its SubscriberCounters).
int subscribe(const Args& args) {
  auto node = make_node(args, "peer-sub");
  auto sub = value_or_fail(node->subscribe<TestMessage>(args.str("topic"), subscriber_qos(args, 256)));
  say("READY");
  wait_for_publishers(*sub, args.num("wait_pubs", 0));
  const std::uint64_t expect = args.num("expect", 1000);
  const bool lossless = args.num("lossless", 1) != 0;
  const std::uint64_t first_seq = args.num("first_seq", 1);
  const std::uint64_t sleep_us = args.num("sleep_us", 0);
  const std::uint64_t report_every = args.num("report_every", 0);
  const auto deadline = Clock::now() + std::chrono::milliseconds(args.num("timeout_ms", 60000));
  std::map<std::uint32_t, std::uint64_t> last;
  std::uint64_t received = 0;
  std::uint64_t errors = 0;
  std::uint64_t first = 0;
  std::uint64_t newest = 0;
  std::uint32_t idle = 0;
  // One message: false when there was none.
  auto take_one = [&]() -> bool {
    auto sample = sub->take();
    if (!sample) {
      if (sample.failed()) {
        fail(std::string(sample.error().message()));
      }
      return false;
    }
    const TestMessage& m = **sample;
    if (!axon::test::intact(m) || (*sample).info().sequence != m.sequence) {
      ++errors;
    }
    auto [it, inserted] = last.try_emplace(m.publisher, first_seq - 1);
    std::uint64_t& previous = it->second;
    if (lossless ? m.sequence != previous + 1 : m.sequence <= previous) {
      ++errors;
      say("ORDER publisher=" + std::to_string(m.publisher) + " got=" + std::to_string(m.sequence) +
          " after=" + std::to_string(previous));
    }
    previous = m.sequence;
    if (received == 0) {
      first = m.sequence;
    }
    newest = m.sequence;
    ++received;
    if (report_every != 0 && received % report_every == 0) {
      say("PROGRESS " + std::to_string(received));
    }
    if (sleep_us != 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
    }
    return true;
  };
  while (received < expect && Clock::now() < deadline) {
    if (take_one()) {
      idle = 0;
    } else if (++idle > 64) {
      // Two cores for many processes: spin briefly, then sleep.
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  const auto extra_deadline = Clock::now() + std::chrono::milliseconds(args.num("extra_ms", 0));
  while (Clock::now() < extra_deadline) {
    if (!take_one()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  say("RESULT received=" + std::to_string(received) + " publishers=" + std::to_string(last.size()) +
      " errors=" + std::to_string(errors) + " first=" + std::to_string(first) + " last=" + std::to_string(newest));
  // The publisher counts a message queued just after it pushes it (a relaxed
  // statistic in its process): the last one can be taken before it is
  // counted. Give the count a moment to catch up with what was taken.
  axon::SubscriberCounters c = sub->counters();
  const auto counted_by = Clock::now() + std::chrono::seconds(2);
  while (c.queue.queued < c.taken && Clock::now() < counted_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    c = sub->counters();
  }
  say("COUNTERS taken=" + std::to_string(c.taken) + " publishers_lost=" + std::to_string(c.publishers_lost) +
      " queued=" + std::to_string(c.queue.queued) + " dropped_full=" + std::to_string(c.queue.dropped_full) +
      " dropped_oldest=" + std::to_string(c.queue.dropped_oldest) +
      " dropped_timeout=" + std::to_string(c.queue.dropped_timeout) +
      " quarantined=" + std::to_string(c.queue.quarantined) + " high_water=" + std::to_string(c.queue.high_water));
  return received == expect && errors == 0 ? 0 : 1;
}

int other_type(const Args& args) {
  auto node = make_node(args, "peer-other");
  auto sub = node->subscribe<axon::test::OtherMessage>(args.str("topic"));
  if (sub) {
    say("ACCEPTED");
    return 1;
  }
  say("REFUSED " + std::string(sub.error().message()));
  return 0;
}

}  // namespace axon::test::peer
