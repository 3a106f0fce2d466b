// QoS and backpressure of the shared-memory transport between real
// processes: subscribers in axon_test_peer processes, some of them stopped
// with SIGSTOP (a stuck or descheduled subscriber), and usually the publisher
// in this process so that the test can read every PublishStatus, its
// counters, the subscribers' fill and its pool.
//
// Timing: there are no performance assertions. Timeouts are generous upper
// bounds that only detect a hang; a few lower bounds check that a publisher
// did wait (a wait can never be shorter than its timeout, however noisy the
// machine). A subscriber is stopped only after it connected (its "LINKED"
// line), at a moment it does not hold the domain lock (stop_outside_lock.hpp),
// and continued before anything of this process takes the domain lock again:
// a process stopped while it holds the lock would hold up everyone.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/peer_domain_test.hpp"
#include "tests/support/stop_outside_lock.hpp"
#include "tests/support/test_messages.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::TestMessage;
using Clock = std::chrono::steady_clock;
using Pub = std::shared_ptr<Publisher<TestMessage>>;

constexpr std::uint32_t kPublisherId = 5;

/// SIGSTOPs `child` at a moment it does not hold `domain`'s lock and waits
/// until all its threads are stopped: a subscriber stopped while its service
/// thread held the lock would hold up this test's other processes (a known
/// limit, not what these tests look at).
[[nodiscard]] bool stop(const test::ChildProcess& child, std::uint32_t domain) {
  return test::stop_outside_domain_lock(child.pid(), "/dev/shm/axon_d" + std::to_string(domain) + ".lock", 10s);
}

/// Publishes message `seq`; waits (up to 10 s) for a chunk when the pool is
/// exhausted, which is backpressure, not what these tests look at.
PublishResult publish_seq(Publisher<TestMessage>& pub, std::uint64_t seq) {
  const auto deadline = Clock::now() + 10s;
  for (;;) {
    auto loan = pub.loan();
    if (loan) {
      test::fill(**loan, kPublisherId, seq);
      return pub.publish(std::move(*loan));
    }
    if (loan.failed()) {
      return loan.error();
    }
    if (Clock::now() > deadline) {
      return Error(ErrorCode::kTimeout, "no free chunk for 10 s");
    }
    std::this_thread::sleep_for(50us);
  }
}

std::string describe(const PublishStatus& s) {
  std::ostringstream out;
  out << "{delivered=" << s.delivered << " dropped=" << s.dropped << " evicted=" << s.evicted
      << " timed_out=" << s.timed_out << " full=" << s.full << "}";
  return out.str();
}

std::vector<SubscriberFill> fills_of(const Publisher<TestMessage>& pub) {
  std::vector<SubscriberFill> fills(64);
  fills.resize(pub.subscriber_fill(fills));
  return fills;
}

/// The fill of the one connected subscriber whose queue is `depth` deep.
std::optional<SubscriberFill> fill_with_depth(const Publisher<TestMessage>& pub, std::uint32_t depth) {
  std::optional<SubscriberFill> found;
  for (const SubscriberFill& fill : fills_of(pub)) {
    if (fill.depth == depth) {
      EXPECT_FALSE(found.has_value()) << "two subscribers of depth " << depth;
      found = fill;
    }
  }
  return found;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// `child` exits with 0 (within 30 s), and its output has each of `parts`.
void expect_exit_saying(test::ChildProcess& child, std::initializer_list<std::string> parts) {
  EXPECT_EQ(child.wait(30s), 0) << child.output();
  for (const std::string& part : parts) {
    EXPECT_TRUE(contains(child.output(), part)) << "'" << part << "' not in:\n" << child.output();
  }
}

class QosProcess : public test::PeerDomainTest {
 protected:
  /// This process's node in the test's domain.
  Node& node(std::vector<ChunkClassConfig> classes = {}) {
    if (!node_) {
      NodeOptions options;
      options.domain_id = domain;
      options.chunk_classes = std::move(classes);
      auto created = Node::create("qos-test", options);
      EXPECT_TRUE(created.ok()) << created.error().message();
      node_ = *created;
    }
    return *node_;
  }

  Pub advertise(PublisherQos qos = {}) {
    auto pub = node().advertise<TestMessage>("objects", qos);
    EXPECT_TRUE(pub.ok()) << pub.error().message();
    return pub.ok() ? *pub : nullptr;
  }

  /// advertise() once every one of `subscribers` (peers) is ready, and
  /// when each has linked to it: the publisher, or nullptr (and the test
  /// failed, with the peer's output) when one did not come in time.
  Pub advertise_to(std::initializer_list<test::ChildProcess*> subscribers, PublisherQos qos = {}) {
    for (auto* sub : subscribers) {
      if (!sub->wait_for_line("READY", 10s)) {
        ADD_FAILURE() << "not ready: " << sub->output();
        return nullptr;
      }
    }
    Pub pub = advertise(qos);
    for (auto* sub : subscribers) {
      if (pub && !sub->wait_for_line("LINKED", 20s)) {
        ADD_FAILURE() << "not linked: " << sub->output();
        return nullptr;
      }
    }
    return pub;
  }

  /// Every chunk of this process's pool is free again (after the publisher
  /// was dropped and its subscribers left; the node's service thread
  /// reclaims their connections).
  void expect_pool_whole() {
    auto whole = [&] {
      for (const PoolClassStats& c : node_->pool_stats()) {
        if (c.free_chunks != c.total_chunks) {
          return false;
        }
      }
      return true;
    };
    EXPECT_TRUE(eventually(whole, 20s)) << [&] {
      std::string text;
      for (const PoolClassStats& c : node_->pool_stats()) {
        text += std::to_string(c.payload_bytes) + " B: " + std::to_string(c.free_chunks) + "/" +
                std::to_string(c.total_chunks) + " free\n";
      }
      return text;
    }();
  }

  void TearDown() override {
    node_.reset();
    // Every participant has exited by now: nothing may stay in /dev/shm.
    EXPECT_TRUE(test::domain_files(domain).empty());
  }

  std::shared_ptr<Node> node_;
};

// 1. Drop-oldest: a stuck subscriber never holds the publisher back.
TEST_F(QosProcess, DropOldestNeverHoldsThePublisherBackAndAStoppedSubscriberGetsTheNewestDepth) {
  constexpr std::uint64_t kCount = 100'000;
  constexpr std::uint32_t kDepth = 8;
  const std::string newest_first = std::to_string(kCount - kDepth + 1);
  // Keeps up by holding the publisher back when its queue is full: every message, in order.
  auto steady = peer("subscribe", {"overflow=block", "block_timeout_ms=60000", "expect=" + std::to_string(kCount),
                                   "wait_pubs=1", "timeout_ms=600000"});
  auto stuck =
      peer("subscribe", {"overflow=drop-oldest", "depth=" + std::to_string(kDepth), "expect=" + std::to_string(kDepth),
                         "first_seq=" + newest_first, "extra_ms=300", "wait_pubs=1", "timeout_ms=600000"});
  Pub pub = advertise_to({&steady, &stuck});
  ASSERT_TRUE(pub);
  ASSERT_EQ(pub->subscriber_count(), 2U);
  ASSERT_TRUE(stop(stuck, domain));

  std::uint64_t evicted = 0;
  for (std::uint64_t seq = 1; seq <= kCount; ++seq) {
    auto status = publish_seq(*pub, seq);
    ASSERT_TRUE(status.ok()) << "message " << seq << ": " << status.error().message();
    if (status->delivered != 2 || status->dropped != 0 || status->timed_out != 0) {
      FAIL() << "message " << seq << ": " << describe(*status);
    }
    evicted += status->evicted;
  }

  // The stopped subscriber's queue turned over: every message beyond its
  // depth evicted the oldest one, none was dropped or waited for.
  EXPECT_EQ(evicted, kCount - kDepth);
  const PublisherCounters counters = pub->counters();
  EXPECT_EQ(counters.published, kCount);
  EXPECT_EQ(counters.totals.queued, 2 * kCount);
  EXPECT_EQ(counters.totals.dropped_oldest, kCount - kDepth);
  EXPECT_EQ(counters.totals.dropped_full, 0U);
  EXPECT_EQ(counters.totals.dropped_timeout, 0U);
  const auto stuck_fill = fill_with_depth(*pub, kDepth);
  ASSERT_TRUE(stuck_fill.has_value());
  EXPECT_EQ(stuck_fill->queued, kDepth);
  EXPECT_EQ(stuck_fill->counters.queued, kCount);
  EXPECT_EQ(stuck_fill->counters.dropped_oldest, kCount - kDepth);
  EXPECT_EQ(stuck_fill->counters.high_water, kDepth);
  ASSERT_TRUE(steady.wait_for_line("RESULT", 120s)) << steady.output();
  EXPECT_TRUE(contains(steady.output(), "RESULT received=100000 publishers=1 errors=0 first=1 last=100000"))
      << steady.output();
  // (Read from its own counters: it may have left, and its fill with it.)
  ASSERT_TRUE(steady.wait_for_line("COUNTERS", 20s)) << steady.output();
  EXPECT_TRUE(contains(steady.output(), "queued=100000 dropped_full=0 dropped_oldest=0 dropped_timeout=0"))
      << steady.output();
  stuck.kill(SIGCONT);
  expect_exit_saying(stuck, {"RESULT received=8 publishers=1 errors=0 first=" + newest_first + " last=100000",
                             "taken=8 publishers_lost=0 queued=100000 dropped_full=0 dropped_oldest=99992"});
  EXPECT_EQ(steady.wait(30s), 0) << steady.output();
  pub.reset();
  expect_pool_whole();
}

TEST_F(QosProcess, LatestOnlySubscriberThatWasStoppedGetsJustTheNewestMessage) {
  auto stuck = peer("subscribe", {"overflow=latest-only", "expect=1", "first_seq=1000", "extra_ms=300", "wait_pubs=1",
                                  "timeout_ms=600000"});
  Pub pub = advertise_to({&stuck});
  ASSERT_TRUE(pub);
  ASSERT_TRUE(stop(stuck, domain));
  std::uint64_t evicted = 0;
  for (std::uint64_t seq = 1; seq <= 1000; ++seq) {
    auto status = publish_seq(*pub, seq);
    ASSERT_TRUE(status.ok()) << status.error().message();
    ASSERT_EQ(status->delivered, 1U) << describe(*status);
    evicted += status->evicted;
  }
  EXPECT_EQ(evicted, 999U);
  const auto fill = fill_with_depth(*pub, 1);
  ASSERT_TRUE(fill.has_value()) << "latest-only is a queue of depth 1";
  EXPECT_EQ(fill->queued, 1U);
  stuck.kill(SIGCONT);
  expect_exit_saying(stuck, {"RESULT received=1 publishers=1 errors=0 first=1000 last=1000"});
  pub.reset();
  expect_pool_whole();
}

// 2. Block with a timeout: the stuck subscriber costs the publisher at most
// its timeout per message and misses those messages; the other one does not.
TEST_F(QosProcess, BlockPublisherWaitsAtMostItsTimeoutThenDropsForThatSubscriberOnly) {
  constexpr std::int64_t kTimeoutMs = 50;
  auto other = peer("subscribe", {"depth=256", "expect=20", "wait_pubs=1", "timeout_ms=120000"});
  auto stuck = peer("subscribe", {"overflow=block", "depth=4", "block_timeout_ms=" + std::to_string(kTimeoutMs),
                                  "expect=4", "extra_ms=300", "wait_pubs=1", "timeout_ms=600000"});
  Pub pub = advertise_to({&other, &stuck});
  ASSERT_TRUE(pub);
  ASSERT_TRUE(stop(stuck, domain));

  for (std::uint64_t seq = 1; seq <= 4; ++seq) {
    auto status = publish_seq(*pub, seq);
    ASSERT_TRUE(status.ok()) << status.error().message();
    EXPECT_EQ(status->delivered, 2U) << describe(*status);
    EXPECT_EQ(status->dropped, 0U) << describe(*status);
  }
  for (std::uint64_t seq = 5; seq <= 20; ++seq) {
    const auto started = Clock::now();
    auto status = publish_seq(*pub, seq);
    const auto waited = Clock::now() - started;
    ASSERT_TRUE(status.ok()) << "best effort: a timeout is an outcome, not an error: " << status.error().message();
    EXPECT_EQ(status->delivered, 1U) << describe(*status);
    EXPECT_EQ(status->dropped, 1U) << describe(*status);
    EXPECT_EQ(status->timed_out, 1U) << describe(*status);
    EXPECT_EQ(status->evicted, 0U) << describe(*status);
    EXPECT_GE(waited, std::chrono::milliseconds(kTimeoutMs)) << "it gave up before the subscriber's timeout";
    EXPECT_LT(waited, 10s) << "it waited far beyond the subscriber's timeout";
  }

  const auto stuck_fill = fill_with_depth(*pub, 4);
  ASSERT_TRUE(stuck_fill.has_value());
  EXPECT_EQ(stuck_fill->queued, 4U);
  EXPECT_EQ(stuck_fill->counters.queued, 4U);
  EXPECT_EQ(stuck_fill->counters.dropped_timeout, 16U);
  EXPECT_EQ(stuck_fill->counters.dropped_oldest, 0U);
  EXPECT_EQ(pub->counters().totals.dropped_timeout, 16U);
  EXPECT_EQ(pub->counters().totals.dropped_full, 0U);

  ASSERT_TRUE(other.wait_for_line("RESULT", 60s)) << other.output();
  EXPECT_TRUE(contains(other.output(), "RESULT received=20 publishers=1 errors=0 first=1 last=20")) << other.output();
  stuck.kill(SIGCONT);
  expect_exit_saying(stuck, {"RESULT received=4 publishers=1 errors=0 first=1 last=4", "dropped_timeout=16"});
  EXPECT_EQ(other.wait(30s), 0) << other.output();
  pub.reset();
  expect_pool_whole();
}

TEST_F(QosProcess, PublisherHeldBackByAReliableSubscriberStopsWaitingWhenThatProcessDies) {
  // The timeout is far beyond the test's bounds: only noticing the death
  // (the node's liveness check) can end the wait in time.
  auto doomed = peer("subscribe", {"reliable=1", "depth=2", "block_timeout_ms=120000", "expect=2", "wait_pubs=1",
                                   "timeout_ms=600000"});
  Pub pub = advertise_to({&doomed});
  ASSERT_TRUE(pub);
  ASSERT_TRUE(stop(doomed, domain));
  for (std::uint64_t seq = 1; seq <= 2; ++seq) {
    auto status = publish_seq(*pub, seq);
    ASSERT_TRUE(status.ok()) << status.error().message();
    ASSERT_EQ(status->delivered, 1U) << describe(*status);
  }
  // Killed while (most likely) the publisher waits for room in its queue.
  std::thread killer([&] {
    std::this_thread::sleep_for(300ms);
    doomed.kill(SIGKILL);
  });
  const auto started = Clock::now();
  auto status = publish_seq(*pub, 3);
  const auto waited = Clock::now() - started;
  killer.join();
  EXPECT_LT(waited, 60s) << "it waited for the timeout of a subscriber that had died";
  ASSERT_TRUE(status.ok()) << "a subscriber that died is not a timeout: " << status.error().message();
  EXPECT_EQ(status->timed_out, 0U) << describe(*status);
  EXPECT_EQ(status->delivered, 0U) << describe(*status);
  EXPECT_EQ(doomed.wait(10s), 128 + SIGKILL);
  EXPECT_TRUE(eventually([&] { return pub->subscriber_count() == 0; }, 20s));
  pub.reset();
  expect_pool_whole();
}

// 3. Reliable: a slow subscriber holds a fast publisher back, never loses a message.
TEST_F(QosProcess, ReliableSubscriberThatIsSlowReceivesEveryMessageInOrder) {
  constexpr std::uint64_t kCount = 500;
  auto slow =
      peer("subscribe", {"reliable=1", "depth=4", "block_timeout_ms=30000", "sleep_us=500",
                         "expect=" + std::to_string(kCount), "extra_ms=200", "wait_pubs=1", "timeout_ms=300000"});
  Pub pub = advertise_to({&slow});
  ASSERT_TRUE(pub);

  for (std::uint64_t seq = 1; seq <= kCount; ++seq) {
    auto status = publish_seq(*pub, seq);
    ASSERT_TRUE(status.ok()) << "message " << seq << ": " << status.error().message();
    if (status->delivered != 1 || status->dropped != 0 || status->timed_out != 0 || status->evicted != 0) {
      FAIL() << "message " << seq << ": " << describe(*status);
    }
  }
  EXPECT_EQ(slow.wait(120s), 0) << slow.output();
  EXPECT_TRUE(contains(slow.output(), "RESULT received=500 publishers=1 errors=0 first=1 last=500")) << slow.output();
  EXPECT_TRUE(contains(slow.output(), "queued=500 dropped_full=0 dropped_oldest=0 dropped_timeout=0")) << slow.output();
  const PublisherCounters counters = pub->counters();
  EXPECT_EQ(counters.totals.queued, kCount);
  EXPECT_EQ(counters.totals.dropped_full + counters.totals.dropped_oldest + counters.totals.dropped_timeout, 0U);
  pub.reset();
  expect_pool_whole();
}

// 4. Reliable: a subscriber full for its whole timeout is an error for the
// publisher (never a silent drop); the other subscribers got the message.
TEST_F(QosProcess, ReliableTimeoutMakesPublishReturnTimeoutWhileOthersStillGetTheMessage) {
  constexpr std::int64_t kTimeoutMs = 100;
  auto other = peer("subscribe", {"depth=256", "expect=4", "wait_pubs=1", "timeout_ms=120000"});
  auto stuck = peer("subscribe", {"reliable=1", "depth=2", "block_timeout_ms=" + std::to_string(kTimeoutMs), "expect=3",
                                  "lossless=0", "report_every=1", "extra_ms=300", "wait_pubs=1", "timeout_ms=600000"});
  Pub pub = advertise_to({&other, &stuck});
  ASSERT_TRUE(pub);
  ASSERT_TRUE(stop(stuck, domain));

  for (std::uint64_t seq = 1; seq <= 2; ++seq) {
    auto status = publish_seq(*pub, seq);
    ASSERT_TRUE(status.ok()) << status.error().message();
    EXPECT_EQ(status->delivered, 2U) << describe(*status);
  }
  const auto started = Clock::now();
  auto timed_out = publish_seq(*pub, 3);
  const auto waited = Clock::now() - started;
  ASSERT_TRUE(timed_out.ok()) << "a timeout is an outcome, not an error: " << timed_out.error().message();
  EXPECT_EQ(timed_out->timed_out, 1U) << "a reliable subscriber missed message 3 silently: " << describe(*timed_out);
  EXPECT_EQ(timed_out->delivered, 1U) << describe(*timed_out);
  EXPECT_GE(waited, std::chrono::milliseconds(kTimeoutMs));
  EXPECT_LT(waited, 10s);
  const auto stuck_fill = fill_with_depth(*pub, 2);
  ASSERT_TRUE(stuck_fill.has_value());
  EXPECT_EQ(stuck_fill->counters.dropped_timeout, 1U);
  EXPECT_EQ(stuck_fill->queued, 2U);
  EXPECT_EQ(pub->counters().totals.dropped_timeout, 1U);

  // Once it drains, reliable delivery goes on.
  stuck.kill(SIGCONT);
  ASSERT_TRUE(stuck.wait_for_line("PROGRESS 2", 20s)) << stuck.output();
  auto after = publish_seq(*pub, 4);
  ASSERT_TRUE(after.ok()) << after.error().message();
  EXPECT_EQ(after->delivered, 2U) << describe(*after);
  expect_exit_saying(stuck, {"RESULT received=3 publishers=1 errors=0 first=1 last=4", "dropped_timeout=1"});
  expect_exit_saying(other, {"RESULT received=4 publishers=1 errors=0 first=1 last=4"});
  pub.reset();
  expect_pool_whole();
}

// 5. Transient local: an idle publisher's process hands its history over.
TEST_F(QosProcess, LateJoinerGetsTheLastMessagesOfAnIdlePublisherProcessThenNewOnes) {
  auto publisher = peer(
      "publish", {"durability=4", "count=10", "wait_subs=0", "then_count=5", "then_wait_subs=1", "linger_ms=2000"});
  ASSERT_TRUE(publisher.wait_for_line("PUBLISHED 10", 20s)) << publisher.output();
  // The publisher now sleeps until a subscriber is active: only its service
  // thread can hand the history over.
  auto joiner = peer("subscribe", {"depth=16", "expect=9", "first_seq=7", "extra_ms=300", "timeout_ms=60000"});
  ASSERT_TRUE(joiner.wait_for_line("READY", 10s)) << joiner.output();
  EXPECT_TRUE(publisher.wait_for_line("PUBLISHED_MORE 5", 30s)) << publisher.output();
  EXPECT_EQ(joiner.wait(60s), 0) << joiner.output();
  EXPECT_TRUE(contains(joiner.output(), "RESULT received=9 publishers=1 errors=0 first=7 last=15")) << joiner.output();
  EXPECT_EQ(publisher.wait(30s), 0) << publisher.output();
}

TEST_F(QosProcess, LateJoinerGetsTheHistoryExactlyOnceWhilePublishingGoesOn) {
  Pub pub = advertise({.durability = Durability::kTransientLocal, .durability_depth = 4});
  ASSERT_TRUE(pub);
  for (std::uint64_t seq = 1; seq <= 10; ++seq) {
    auto status = publish_seq(*pub, seq);
    ASSERT_TRUE(status.ok()) << status.error().message();
    EXPECT_EQ(status->delivered, 0U);
  }
  auto joiner =
      peer("subscribe", {"depth=64", "expect=24", "first_seq=7", "extra_ms=300", "wait_pubs=1", "timeout_ms=60000"});
  ASSERT_TRUE(joiner.wait_for_line("LINKED", 20s)) << joiner.output();
  // The history goes over in publish() or in the service thread, whichever
  // comes first; either way once, and before the new messages.
  for (std::uint64_t seq = 11; seq <= 30; ++seq) {
    auto status = publish_seq(*pub, seq);
    ASSERT_TRUE(status.ok()) << status.error().message();
    EXPECT_EQ(status->delivered, 1U) << "message " << seq << ": " << describe(*status);
  }
  EXPECT_EQ(joiner.wait(60s), 0) << joiner.output();
  EXPECT_TRUE(contains(joiner.output(), "RESULT received=24 publishers=1 errors=0 first=7 last=30")) << joiner.output();
  pub.reset();
  expect_pool_whole();
}

TEST_F(QosProcess, LateJoinerWithAShorterQueueGetsTheNewestMessagesThatFit) {
  Pub pub = advertise({.durability = Durability::kTransientLocal, .durability_depth = 4});
  ASSERT_TRUE(pub);
  for (std::uint64_t seq = 1; seq <= 10; ++seq) {
    ASSERT_TRUE(publish_seq(*pub, seq).ok());
  }
  auto joiner =
      peer("subscribe", {"depth=2", "expect=2", "first_seq=9", "extra_ms=300", "wait_pubs=1", "timeout_ms=60000"});
  EXPECT_EQ(joiner.wait(60s), 0) << joiner.output();
  EXPECT_TRUE(contains(joiner.output(), "RESULT received=2 publishers=1 errors=0 first=9 last=10")) << joiner.output();
  pub.reset();
  expect_pool_whole();
}

TEST_F(QosProcess, LateJoinerSleepingOnItsWakeWordIsWokenByTheHistoryHandover) {
  Pub pub = advertise({.durability = Durability::kTransientLocal, .durability_depth = 4});
  ASSERT_TRUE(pub);
  for (std::uint64_t seq = 1; seq <= 10; ++seq) {
    ASSERT_TRUE(publish_seq(*pub, seq).ok());
  }
  // Connects on its first has_data(), then sleeps (unless the service
  // thread was quicker): only the handover's wake-up gets it the history
  // before its 60 s wait ends.
  auto sleeper = peer("wait", {"until=4", "wait_ms=60000"});
  for (const char* line : {"GOT 7", "GOT 8", "GOT 9", "GOT 10"}) {
    ASSERT_TRUE(sleeper.wait_for_line(line, 15s)) << sleeper.output();
  }
  EXPECT_EQ(sleeper.wait(20s), 0) << sleeper.output();
  EXPECT_FALSE(contains(sleeper.output(), "timed-out")) << sleeper.output();
  pub.reset();
  expect_pool_whole();
}

// 6. Quarantine: a subscriber stuck full stops costing the publisher its timeout.
TEST_F(QosProcess, QuarantinedSubscriberIsEvictedInsteadOfWaitedForUntilItDrains) {
  constexpr std::int64_t kQuarantineMs = 50;
  auto stuck = peer("subscribe", {"overflow=block", "depth=4", "block_timeout_ms=20000",
                                  "quarantine_ms=" + std::to_string(kQuarantineMs), "expect=5", "first_seq=17",
                                  "report_every=4", "extra_ms=3000", "wait_pubs=1", "timeout_ms=600000"});
  Pub pub = advertise_to({&stuck});
  ASSERT_TRUE(pub);
  ASSERT_TRUE(stop(stuck, domain));

  for (std::uint64_t seq = 1; seq <= 4; ++seq) {
    auto status = publish_seq(*pub, seq);
    ASSERT_TRUE(status.ok()) << status.error().message();
    EXPECT_EQ(status->delivered, 1U) << describe(*status);
    EXPECT_EQ(status->evicted, 0U) << describe(*status);
  }
  // Full: the publisher waits for the quarantine time (not the 20 s
  // timeout), then evicts the oldest.
  const auto started = Clock::now();
  auto first = publish_seq(*pub, 5);
  const auto waited = Clock::now() - started;
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_EQ(first->delivered, 1U) << describe(*first);
  // Without the quarantine each of the following messages would wait out
  // the block timeout: stop here.
  ASSERT_EQ(first->evicted, 1U) << describe(*first);
  ASSERT_EQ(first->timed_out, 0U) << describe(*first);
  EXPECT_EQ(first->dropped, 0U) << describe(*first);
  EXPECT_GE(waited, std::chrono::milliseconds(kQuarantineMs));
  EXPECT_LT(waited, 10s) << "it waited for the block timeout, not the quarantine time";
  auto fill = fill_with_depth(*pub, 4);
  ASSERT_TRUE(fill.has_value());
  EXPECT_TRUE(fill->quarantined);
  EXPECT_EQ(fill->counters.quarantined, 1U);

  // Quarantined: later messages evict at once instead of waiting.
  for (std::uint64_t seq = 6; seq <= 20; ++seq) {
    auto status = publish_seq(*pub, seq);
    ASSERT_TRUE(status.ok()) << status.error().message();
    EXPECT_EQ(status->delivered, 1U) << "message " << seq << ": " << describe(*status);
    EXPECT_EQ(status->evicted, 1U) << "message " << seq << ": " << describe(*status);
    EXPECT_EQ(status->timed_out, 0U) << "message " << seq << ": " << describe(*status);
  }
  fill = fill_with_depth(*pub, 4);
  ASSERT_TRUE(fill.has_value());
  EXPECT_TRUE(fill->quarantined);
  EXPECT_EQ(fill->queued, 4U);
  EXPECT_EQ(fill->counters.quarantined, 1U) << "one quarantine, not one per message";
  EXPECT_EQ(fill->counters.dropped_oldest, 16U);
  EXPECT_EQ(fill->counters.dropped_timeout, 0U);
  EXPECT_EQ(pub->counters().totals.quarantined, 1U);

  // It drains (the newest four), and the next message ends the quarantine.
  stuck.kill(SIGCONT);
  ASSERT_TRUE(stuck.wait_for_line("PROGRESS 4", 20s)) << stuck.output();
  auto drained = publish_seq(*pub, 21);
  ASSERT_TRUE(drained.ok()) << drained.error().message();
  EXPECT_EQ(drained->delivered, 1U) << describe(*drained);
  EXPECT_EQ(drained->evicted, 0U) << describe(*drained);
  fill = fill_with_depth(*pub, 4);
  ASSERT_TRUE(fill.has_value());
  EXPECT_FALSE(fill->quarantined);
  EXPECT_EQ(fill->counters.quarantined, 1U);
  expect_exit_saying(stuck, {"RESULT received=5 publishers=1 errors=0 first=17 last=21",
                             "dropped_oldest=16 dropped_timeout=0 quarantined=1"});
  pub.reset();
  expect_pool_whole();
}

// 7. Backpressure: reported once per crossing of the high-water mark.
TEST_F(QosProcess, BackpressureHandlerFiresOncePerCrossingOfTheHighWaterMark) {
  constexpr std::uint32_t kDepth = 8;  // high water at 75 %: 6 queued
  auto stuck = peer("subscribe", {"overflow=drop-oldest", "depth=8", "expect=17", "first_seq=13", "report_every=1",
                                  "extra_ms=300", "wait_pubs=1", "timeout_ms=600000"});
  Pub pub = advertise_to({&stuck}, {.high_water_percent = 75});
  ASSERT_TRUE(pub);
  std::vector<BackpressureEvent> events;
  pub->on_backpressure([&](const BackpressureEvent& event) { events.push_back(event); });
  ASSERT_TRUE(stop(stuck, domain));

  for (std::uint64_t seq = 1; seq <= 20; ++seq) {
    auto status = publish_seq(*pub, seq);
    ASSERT_TRUE(status.ok()) << status.error().message();
    EXPECT_EQ(status->full, seq >= 6 ? 1U : 0U) << "message " << seq << ": " << describe(*status);
    EXPECT_EQ(events.size(), seq >= 6 ? 1U : 0U) << "message " << seq;
  }
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].queued, 6U);
  EXPECT_EQ(events[0].depth, kDepth);
  auto fill = fill_with_depth(*pub, kDepth);
  ASSERT_TRUE(fill.has_value());
  EXPECT_EQ(fill->subscriber_id, events[0].subscriber_id);
  EXPECT_EQ(fill->queued, kDepth);
  EXPECT_EQ(fill->counters.high_water, kDepth);
  EXPECT_EQ(pub->counters().totals.high_water, kDepth);

  // It drains: below the mark again; the next crossing is reported again.
  stuck.kill(SIGCONT);
  ASSERT_TRUE(stuck.wait_for_line("PROGRESS 8", 20s)) << stuck.output();
  auto below = publish_seq(*pub, 21);
  ASSERT_TRUE(below.ok());
  EXPECT_EQ(below->full, 0U) << describe(*below);
  ASSERT_TRUE(stuck.wait_for_line("PROGRESS 9", 20s)) << stuck.output();
  ASSERT_TRUE(stop(stuck, domain));
  for (std::uint64_t seq = 22; seq <= 29; ++seq) {
    ASSERT_TRUE(publish_seq(*pub, seq).ok());
  }
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[1].queued, 6U);
  fill = fill_with_depth(*pub, kDepth);
  ASSERT_TRUE(fill.has_value());
  EXPECT_EQ(fill->queued, kDepth);
  stuck.kill(SIGCONT);
  expect_exit_saying(stuck, {"RESULT received=17 publishers=1 errors=0 first=13 last=29"});
  pub.reset();
  expect_pool_whole();
}

// 8. Wake-ups across processes.
TEST_F(QosProcess, PublishWakesASubscriberProcessSleepingOnItsWakeWord) {
  Pub pub = advertise();
  ASSERT_TRUE(pub);
  // A missed wake-up would leave it asleep for 60 s; we wait 15 s at most.
  auto sleeper = peer("wait", {"rounds=3", "wait_ms=60000"});
  for (std::uint64_t round = 1; round <= 3; ++round) {
    const std::string r = std::to_string(round);
    ASSERT_TRUE(sleeper.wait_for_line("WAITING " + r, 20s)) << sleeper.output();
    ASSERT_EQ(pub->subscriber_count(), 1U);
    auto status = publish_seq(*pub, round);
    ASSERT_TRUE(status.ok()) << status.error().message();
    EXPECT_EQ(status->delivered, 1U);
    const auto woke = sleeper.wait_for_line("WOKE " + r, 15s);
    ASSERT_TRUE(woke) << sleeper.output();
    EXPECT_EQ(*woke, "WOKE " + r + " woken");
    EXPECT_TRUE(sleeper.wait_for_line("GOT " + r, 10s)) << sleeper.output();
  }
  EXPECT_EQ(sleeper.wait(20s), 0) << sleeper.output();
  pub.reset();
  expect_pool_whole();
}

TEST_F(QosProcess, ASleepingSubscriberThatNothingWakesTimesOut) {
  // The control for the test above: "woken" is not what every wait returns.
  Pub pub = advertise();
  ASSERT_TRUE(pub);
  auto sleeper = peer("wait", {"rounds=1", "wait_ms=200"});
  const auto woke = sleeper.wait_for_line("WOKE 1", 20s);
  ASSERT_TRUE(woke) << sleeper.output();
  EXPECT_EQ(*woke, "WOKE 1 timed-out");
  EXPECT_EQ(sleeper.wait(20s), 0) << sleeper.output();
}

// 9. A publisher process killed: its sleeping subscriber wakes and counts it lost.
TEST_F(QosProcess, KilledPublisherWakesItsSleepingSubscriberAndCountsAsLost) {
  auto sleeper = peer("wait", {"take_first=1", "rounds=1", "wait_ms=60000"});
  ASSERT_TRUE(sleeper.wait_for_line("READY", 10s)) << sleeper.output();
  auto publisher = peer("publish", {"count=1", "wait_subs=1", "linger_ms=600000"});
  ASSERT_TRUE(sleeper.wait_for_line("GOT 1", 20s)) << sleeper.output() << publisher.output();
  ASSERT_TRUE(sleeper.wait_for_line("WAITING 1", 10s)) << sleeper.output();
  publisher.kill(SIGKILL);
  EXPECT_EQ(publisher.wait(10s), 128 + SIGKILL);
  const auto woke = sleeper.wait_for_line("WOKE 1", 20s);
  ASSERT_TRUE(woke) << sleeper.output();
  EXPECT_EQ(*woke, "WOKE 1 woken");
  const auto state = sleeper.wait_for_line("STATE 1", 10s);
  ASSERT_TRUE(state) << sleeper.output();
  EXPECT_EQ(*state, "STATE 1 publishers_lost=1 publishers=0");
  EXPECT_EQ(sleeper.wait(20s), 0) << sleeper.output();
}

// 10. Pool accounting: evicted chunks go back while the subscriber is stuck.
TEST_F(QosProcess, EvictedChunksGoBackToThePoolWhileTheSubscriberIsStopped) {
  // 64 chunks: without the evictions giving their chunks back the pool
  // would run dry after a few dozen messages.
  node({{.payload_bytes = 256, .count = 64}});
  constexpr std::uint32_t kDepth = 8;
  constexpr std::uint64_t kCount = 10'000;
  auto stuck = peer("subscribe", {"overflow=drop-oldest", "depth=8", "expect=8", "first_seq=9993", "extra_ms=300",
                                  "wait_pubs=1", "timeout_ms=600000"});
  Pub pub = advertise_to({&stuck});
  ASSERT_TRUE(pub);
  ASSERT_TRUE(stop(stuck, domain));
  for (std::uint64_t seq = 1; seq <= kCount; ++seq) {
    auto loan = pub->loan();
    ASSERT_TRUE(loan.ok()) << "message " << seq << ": " << loan.error().message();
    test::fill(**loan, kPublisherId, seq);
    auto status = pub->publish(std::move(*loan));
    ASSERT_TRUE(status.ok()) << status.error().message();
    ASSERT_EQ(status->delivered, 1U);
  }
  // In use: the stuck subscriber's queue and at most an eighth of the class
  // in the publisher's reuse cache.
  const PoolClassStats stats = node_->pool_stats().at(0);
  EXPECT_LE(stats.total_chunks - stats.free_chunks, kDepth + stats.total_chunks / 8);
  stuck.kill(SIGCONT);
  expect_exit_saying(stuck, {"RESULT received=8 publishers=1 errors=0 first=9993 last=10000"});
  pub.reset();
  expect_pool_whole();
}

}  // namespace
}  // namespace axon
