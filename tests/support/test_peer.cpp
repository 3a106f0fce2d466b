// axon_test_peer: the other process of multi-process tests.
//   axon_test_peer <command> key=value...
// Commands: publish, subscribe, wait, hold, loan, spam, node, other-type,
// fb-publish, pb-publish, fb-garbage, pb-garbage, hold-lock.
// Prints "READY" once its endpoints exist, then command-specific lines.
//
// Subscriber QoS (subscribe, wait): depth=N, overflow=default|drop-oldest|
// reject-newest|latest-only|block, history=keep-last|keep-all, reliable=1,
// block_timeout_ms=N, quarantine_ms=N; block=1 is overflow=block with a 10 s
// timeout.
// Publisher QoS (publish): durability=N (transient-local, last N messages).
// Every command: domain=N, liveness_ms=N (NodeOptions::liveness_period_ms).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "axon/axon.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "src/base/futex.hpp"
#include "tests/support/schema_messages.hpp"
#include "tests/support/test_messages.hpp"
#include "transports/shm/domain_lock.hpp"

namespace {

using axon::test::TestMessage;
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

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

[[noreturn]] void fail(const std::string& what) {
  say("ERROR " + what);
  std::exit(2);
}

/// The value of `result`; the peer fails with the error when there is none.
template <class T>
T value_or_fail(axon::Result<T> result) {
  if (!result) {
    fail(std::string(result.error().message()));
  }
  return std::move(*result);
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

/// Publishes count=N messages (sequence 1..N) once wait_subs subscribers are
/// connected; with then_count=M it then waits for then_wait_subs subscribers
/// (a transient-local late joiner counts once its history was handed over)
/// and publishes M more. durability=D makes it transient-local (last D).
int publish(const Args& args) {
  auto node = make_node(args, "peer-pub");
  axon::PublisherQos qos;
  if (const std::uint64_t depth = args.num("durability", 0); depth != 0) {
    qos.durability = axon::Durability::kTransientLocal;
    qos.durability_depth = static_cast<std::uint32_t>(depth);
  }
  auto pub = value_or_fail(node->advertise<TestMessage>(args.str("topic"), qos));
  say("READY");
  wait_for_subscribers(*pub, args.num("wait_subs", 1));
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
  const axon::SubscriberCounters c = sub->counters();
  say("COUNTERS taken=" + std::to_string(c.taken) + " publishers_lost=" + std::to_string(c.publishers_lost) +
      " queued=" + std::to_string(c.queue.queued) + " dropped_full=" + std::to_string(c.queue.dropped_full) +
      " dropped_oldest=" + std::to_string(c.queue.dropped_oldest) +
      " dropped_timeout=" + std::to_string(c.queue.dropped_timeout) +
      " quarantined=" + std::to_string(c.queue.quarantined) + " high_water=" + std::to_string(c.queue.high_water));
  return received == expect && errors == 0 ? 0 : 1;
}

const char* name_of(axon::futex::WaitResult result) {
  switch (result) {
    case axon::futex::WaitResult::kWoken: return "woken";
    case axon::futex::WaitResult::kTimedOut: return "timed-out";
    case axon::futex::WaitResult::kInterrupted: return "interrupted";
  }
  return "unknown";
}

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
  auto node = make_node(args, "peer-loan");
  auto pub = value_or_fail(node->advertise<TestMessage>(args.str("topic")));
  say("READY");
  wait_for_subscribers(*pub, args.num("wait_subs", 1));
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

int spam(const Args& args) {
  auto node = make_node(args, "peer-spam");
  auto pub = value_or_fail(node->advertise<TestMessage>(args.str("topic")));
  say("READY");
  wait_for_subscribers(*pub, args.num("wait_subs", 1));
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

/// FlatBuffers ObjectLists built in shared memory.
int fb_publish(const Args& args) {
  auto node = make_node(args, "peer-fb");
  auto pub = value_or_fail(node->advertise<axon::test::fb::ObjectList>(args.str("topic")));
  say("READY");
  wait_for_subscribers(*pub, args.num("wait_subs", 1));
  const auto targets = static_cast<std::uint32_t>(args.num("targets", 128));
  for (std::uint64_t seq = 1; seq <= args.num("count", 100); ++seq) {
    auto loan = pub->loan_builder(targets * 16 + 128);
    if (!loan) {
      fail(std::string(loan.error().message()));
    }
    auto root = axon::test::build_object_list(loan->builder(), seq, targets);
    if (auto status = pub->publish(std::move(*loan), root); !status) {
      fail(std::string(status.error().message()));
    }
  }
  say("PUBLISHED");
  std::this_thread::sleep_for(std::chrono::milliseconds(args.num("linger_ms", 2000)));
  return 0;
}

/// Protobuf ObjectLists serialized into shared memory.
int pb_publish(const Args& args) {
  auto node = make_node(args, "peer-pb");
  auto pub = value_or_fail(node->advertise<axon::test::pb::ObjectList>(args.str("topic")));
  say("READY");
  wait_for_subscribers(*pub, args.num("wait_subs", 1));
  axon::test::pb::ObjectList list;
  for (std::uint64_t seq = 1; seq <= args.num("count", 100); ++seq) {
    axon::test::fill_object_list(list, seq, static_cast<std::uint32_t>(args.num("targets", 128)));
    if (auto status = pub->publish(list); !status) {
      fail(std::string(status.error().message()));
    }
  }
  say("PUBLISHED");
  std::this_thread::sleep_for(std::chrono::milliseconds(args.num("linger_ms", 2000)));
  return 0;
}

/// Bytes that are not a valid message of the topic's type, then one valid
/// message, so the subscriber can show it survived the garbage.
template <class T>
int garbage(const Args& args) {
  auto node = make_node(args, "peer-garbage");
  auto pub = value_or_fail(node->advertise<T>(args.str("topic")));
  say("READY");
  wait_for_subscribers(*pub, 1);
  // 1. Random-looking bytes. 2. A valid message cut short. 3. A valid message
  // whose root offset points far outside the buffer.
  std::vector<std::byte> noise(512, std::byte{0xFF});  // an offset and a varint that never end
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(axon::test::build_object_list(fbb, 1, 128));
  std::vector<std::byte> valid(reinterpret_cast<const std::byte*>(fbb.GetBufferPointer()),
                               reinterpret_cast<const std::byte*>(fbb.GetBufferPointer()) + fbb.GetSize());
  axon::test::pb::ObjectList list;
  axon::test::fill_object_list(list, 1, 128);
  if constexpr (std::is_same_v<T, axon::test::pb::ObjectList>) {
    valid.resize(list.ByteSizeLong());
    list.SerializeToArray(valid.data(), static_cast<int>(valid.size()));
  }
  std::vector<std::byte> truncated(valid.begin(), valid.begin() + static_cast<std::ptrdiff_t>(valid.size() / 2));
  std::vector<std::byte> bad_offset = valid;
  const std::uint32_t far = 0x7FFFFFF0U;
  std::memcpy(bad_offset.data(), &far, sizeof(far));
  for (const auto* bytes : {&noise, &truncated, &bad_offset}) {
    if (!pub->publish_serialized(*bytes)) {
      fail("publish_serialized failed");
    }
  }
  if (!pub->publish_serialized(valid)) {
    fail("publish_serialized failed");
  }
  say("PUBLISHED");
  std::this_thread::sleep_for(std::chrono::milliseconds(args.num("linger_ms", 2000)));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <publish|subscribe|wait|hold|loan|spam|node|other-type|...> key=value...\n",
                 argv[0]);
    return 2;
  }
  Args args;
  for (int i = 2; i < argc; ++i) {
    const std::string kv = argv[i];
    const auto eq = kv.find('=');
    if (eq != std::string::npos) {
      args.values[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  using Run = int (*)(const Args&);
  // A table, three commands a line.
  // clang-format off
  const std::pair<std::string_view, Run> commands[] = {
      {"publish", publish}, {"subscribe", subscribe}, {"wait", wait_on_word},
      {"hold", hold}, {"loan", loan}, {"spam", spam},
      {"node", node_only}, {"other-type", other_type}, {"fb-publish", fb_publish},
      {"pb-publish", pb_publish}, {"fb-garbage", garbage<axon::test::fb::ObjectList>},
      {"pb-garbage", garbage<axon::test::pb::ObjectList>}, {"hold-lock", hold_lock}};
  // clang-format on
  const std::string command = argv[1];
  for (const auto& [name, run] : commands) {
    if (command == name) {
      return run(args);
    }
  }
  std::fprintf(stderr, "unknown command %s\n", command.c_str());
  return 2;
}
