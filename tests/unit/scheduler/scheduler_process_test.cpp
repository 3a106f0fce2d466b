// Executors and wait sets against publishers in other processes
// (axon_test_peer): delivery with each executor, a blocking wait woken by
// another process, liveliness after SIGKILL.
#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/peer_domain_test.hpp"
#include "tests/support/test_messages.hpp"
#include "tests/unit/scheduler/scheduler_test_util.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::TestMessage;

/// What a callback saw of one peer's stream.
struct Stream {
  std::atomic<std::uint64_t> received{0};
  std::atomic<std::uint64_t> last{0};
  std::atomic<std::uint64_t> errors{0};

  void on(const Sample<TestMessage>& s) {
    if (!test::intact(*s) || s->sequence != last.load() + 1) {
      errors.fetch_add(1);
    }
    last = s->sequence;
    received.fetch_add(1);
  }
};

class SchedulerProcessTest : public test::PeerDomainTest {
 protected:
  void TearDown() override {
    node.reset();
    EXPECT_TRUE(eventually([&] { return test::domain_files(domain).empty(); }, 5s)) << "files left in /dev/shm";
  }

  /// A peer on topic "sched", once it said it is ready.
  test::ChildProcess peer(const std::string& command, std::vector<std::string> args) const {
    auto child = PeerDomainTest::peer(command, std::move(args), "sched");
    EXPECT_TRUE(child.wait_for_line("READY", 20s).has_value()) << child.output();
    return child;
  }

  /// Spins `sut` on a thread of its own while a peer publishes `count`
  /// messages `interval_us` apart, until `stream` has them all (30 s at
  /// most); whether it got them.
  template <class Executor>
  bool receives_while_spinning(Executor& sut, const Stream& stream, std::uint64_t count, std::uint64_t interval_us) {
    std::thread spinner([&] { EXPECT_TRUE(sut.spin().ok()); });
    auto publisher = peer("publish", {"count=" + std::to_string(count), "interval_us=" + std::to_string(interval_us)});
    const bool all = eventually([&] { return stream.received.load() == count; }, 30s);
    sut.stop();
    spinner.join();
    EXPECT_TRUE(all) << "received " << stream.received.load() << "\n" << publisher.output();
    EXPECT_EQ(publisher.wait(20s), 0);
    return all;
  }

  std::shared_ptr<CallbackSubscription<TestMessage>> subscribe(Stream& stream, SubscriberQos qos = {.depth = 256}) {
    auto sub = node->subscribe<TestMessage>("sched", qos, [&stream](const Sample<TestMessage>& s) { stream.on(s); });
    EXPECT_TRUE(sub.ok()) << sub.error().message();
    return *sub;
  }

  std::shared_ptr<Node> node = make_node("scheduler_process_test");
};

TEST_F(SchedulerProcessTest, SingleThreadedExecutorReceivesFromAnotherProcess) {
  for (auto strategy : {WaitStrategy::spin_yield_sleep(), WaitStrategy::blocking()}) {
    Stream stream;
    auto sub = subscribe(stream);
    SingleThreadedExecutor sut(ExecutorOptions{.wait_strategy = strategy});
    ASSERT_TRUE(sut.add(sub).ok());
    receives_while_spinning(sut, stream, 300, 100);
    EXPECT_EQ(stream.errors.load(), 0U);
  }
}

TEST_F(SchedulerProcessTest, MultiThreadedExecutorReceivesFromAnotherProcess) {
  Stream stream;
  auto sub = subscribe(stream);
  MultiThreadedExecutor sut(MultiThreadedOptions{.threads = 2, .wait_strategy = WaitStrategy::blocking()});
  ASSERT_TRUE(sut.add(sub).ok());
  receives_while_spinning(sut, stream, 300, 100);
  EXPECT_EQ(stream.errors.load(), 0U) << "in order, intact, one callback at a time";
}

TEST_F(SchedulerProcessTest, BlockingExecutorIsWokenByAPublisherInAnotherProcess) {
  Stream stream;
  auto sub = subscribe(stream);
  SingleThreadedExecutor sut(ExecutorOptions{.wait_strategy = WaitStrategy::blocking()});
  ASSERT_TRUE(sut.add(sub).ok());
  // Far apart: the executor is asleep on its futex word when each arrives.
  receives_while_spinning(sut, stream, 5, 100'000);
  EXPECT_EQ(stream.errors.load(), 0U);
}

TEST_F(SchedulerProcessTest, WaitSetWakesForAnotherProcessAndTimesOutAfterIt) {
  auto sub = *node->subscribe<TestMessage>("sched", {.depth = 256});
  WaitSet sut(WaitStrategy::blocking());
  ASSERT_TRUE(sut.attach(sub).ok());
  auto publisher = peer("publish", {"count=20", "interval_us=20000", "linger_ms=200"});

  std::uint64_t received = 0;
  std::uint64_t errors = 0;
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  while (received < 20 && std::chrono::steady_clock::now() < give_up) {
    auto outcome = sut.wait(1s);
    ASSERT_TRUE(outcome.ok());
    for (auto sample = sub->take(); sample; sample = sub->take()) {
      errors += test::intact(**sample) && sample->sequence == received + 1 ? 0 : 1;
      ++received;
    }
  }
  EXPECT_EQ(received, 20U);
  EXPECT_EQ(errors, 0U);
  EXPECT_EQ(publisher.wait(20s), 0);

  auto after = sut.wait(20ms);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->timed_out());
}

TEST_F(SchedulerProcessTest, LivelinessHandlerFiresWhenThePublisherIsKilled) {
  for (int kind = 0; kind < 2; ++kind) {
    SCOPED_TRACE(kind == 0 ? "single-threaded" : "multi-threaded");
    std::atomic<std::uint64_t> received{0};
    std::atomic<std::uint64_t> lost{0};
    auto sub = *node->subscribe<TestMessage>("sched", {.depth = 64, .overflow = Overflow::kDropOldest},
                                             [&](const Sample<TestMessage>&) { received.fetch_add(1); });
    sub->on_publisher_lost([&](const LivelinessEvent& event) {
      EXPECT_EQ(event.topic, "sched");
      lost.fetch_add(event.lost);
    });
    auto blocking = WaitStrategy::blocking();
    SingleThreadedExecutor single(ExecutorOptions{.wait_strategy = blocking});
    MultiThreadedExecutor multi(MultiThreadedOptions{.threads = 1, .wait_strategy = blocking});
    ASSERT_TRUE((kind == 0 ? single.add(sub) : multi.add(sub)).ok());
    std::thread spinner([&] { EXPECT_TRUE(kind == 0 ? single.spin().ok() : multi.spin().ok()); });
    auto publisher = peer("spam", {});
    ASSERT_TRUE(eventually([&] { return received.load() > 100; }, 30s));
    EXPECT_EQ(lost.load(), 0U);

    publisher.kill(SIGKILL);
    publisher.wait(10s);
    const bool fired = eventually([&] { return lost.load() == 1; }, 30s);
    kind == 0 ? single.stop() : multi.stop();
    spinner.join();

    EXPECT_TRUE(fired) << "publishers_lost=" << sub->subscriber().counters().publishers_lost;
  }
}

}  // namespace
}  // namespace axon
