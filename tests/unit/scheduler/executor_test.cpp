// Executors in one process: delivery, order, priority lanes, deadlines,
// claims and stop(). Cross-process cases are in scheduler_process_test.cpp.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/unit/scheduler/scheduler_test_util.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::publish_tick;
using test::Tick;

class ExecutorTest : public ::testing::Test {
 protected:
  void TearDown() override {
    node.reset();
    EXPECT_TRUE(test::domain_files(domain).empty()) << "files left in /dev/shm";
  }

  std::shared_ptr<Publisher<Tick>> advertise(const std::string& topic) { return *node->advertise<Tick>(topic); }

  /// Adds `diag` (priority 0) before `control` (priority 10) to `sut` and
  /// publishes three ticks on each, diagnostics first: only the priority
  /// can put control ahead.
  template <class Executor>
  void add_diagnostics_first(Executor& sut, const std::shared_ptr<CallbackSubscription<Tick>>& diag,
                             const std::shared_ptr<CallbackSubscription<Tick>>& control, Publisher<Tick>& diag_pub,
                             Publisher<Tick>& control_pub) {
    ASSERT_TRUE(sut.add(diag, {.priority = 0}).ok());
    ASSERT_TRUE(sut.add(control, {.priority = 10}).ok());
    for (std::uint64_t i = 1; i <= 3; ++i) {
      ASSERT_TRUE(publish_tick(diag_pub, i));
    }
    for (std::uint64_t i = 1; i <= 3; ++i) {
      ASSERT_TRUE(publish_tick(control_pub, i));
    }
  }

  template <class F>
  std::shared_ptr<CallbackSubscription<Tick>> subscribe(const std::string& topic, F callback, SubscriberQos qos = {}) {
    auto sub = node->subscribe<Tick>(topic, qos, std::move(callback));
    EXPECT_TRUE(sub.ok()) << sub.error().message();
    (void)(*sub)->subscriber().publisher_count();  // connect to publishers that exist now
    return *sub;
  }

  std::uint32_t domain = test::unique_domain();
  std::shared_ptr<Node> node = *Node::create("executor_test", test::scheduler_node_options(domain));
};

TEST_F(ExecutorTest, SubscribeRefusesAnEmptyCallback) {
  auto sut = node->subscribe<Tick>("ticks", {}, nullptr);
  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
}

TEST_F(ExecutorTest, SpinSomeDeliversQueuedMessagesInOrder) {
  auto pub = advertise("ticks");
  std::vector<std::uint64_t> got;
  auto sub = subscribe("ticks", [&](const Sample<Tick>& s) { got.push_back(s->sequence); });
  SingleThreadedExecutor sut;
  ASSERT_TRUE(sut.add(sub).ok());
  for (std::uint64_t i = 1; i <= 10; ++i) {
    ASSERT_TRUE(publish_tick(*pub, i));
  }

  auto ran = sut.spin_some();

  ASSERT_TRUE(ran.ok());
  EXPECT_EQ(*ran, 10U);
  ASSERT_EQ(got.size(), 10U);
  for (std::uint64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(got[i], i + 1);
  }
  EXPECT_EQ(*sut.spin_some(), 0U) << "nothing left";
}

TEST_F(ExecutorTest, RunsControlBeforeDiagnosticsWhenBothAreReady) {
  auto control_pub = advertise("control");
  auto diag_pub = advertise("diagnostics");
  std::vector<std::string> order;
  auto control = subscribe("control", [&](const Sample<Tick>&) { order.emplace_back("control"); });
  auto diag = subscribe("diagnostics", [&](const Sample<Tick>&) { order.emplace_back("diag"); });
  SingleThreadedExecutor sut;
  ASSERT_NO_FATAL_FAILURE(add_diagnostics_first(sut, diag, control, *diag_pub, *control_pub));

  ASSERT_EQ(*sut.spin_some(), 6U);

  const std::vector<std::string> expected{"control", "control", "control", "diag", "diag", "diag"};
  EXPECT_EQ(order, expected);
}

TEST_F(ExecutorTest, SameLevelSubscriptionsTakeTurns) {
  auto a_pub = advertise("a");
  auto b_pub = advertise("b");
  std::string order;
  auto a = subscribe("a", [&](const Sample<Tick>&) { order += 'a'; });
  auto b = subscribe("b", [&](const Sample<Tick>&) { order += 'b'; });
  SingleThreadedExecutor sut;
  ASSERT_TRUE(sut.add(a).ok());
  ASSERT_TRUE(sut.add(b).ok());
  for (std::uint64_t i = 1; i <= 3; ++i) {
    ASSERT_TRUE(publish_tick(*a_pub, i));
    ASSERT_TRUE(publish_tick(*b_pub, i));
  }

  ASSERT_EQ(*sut.spin_some(), 6U);

  EXPECT_EQ(order, "ababab");
}

TEST_F(ExecutorTest, RefusesASubscriptionThatBelongsToAnotherExecutor) {
  auto sub = subscribe("ticks", [](const Sample<Tick>&) {});
  SingleThreadedExecutor first;
  MultiThreadedExecutor second;
  ASSERT_TRUE(first.add(sub).ok());

  auto refused = second.add(sub);

  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message().find("already belongs"), std::string_view::npos);
  ASSERT_TRUE(first.remove(sub).ok());
  EXPECT_TRUE(second.add(sub).ok()) << "free again after remove()";
}

TEST_F(ExecutorTest, StopBeforeSpinMakesSpinReturnAtOnce) {
  SingleThreadedExecutor sut(ExecutorOptions{.wait_strategy = WaitStrategy::blocking()});
  sut.stop();
  EXPECT_TRUE(sut.spin().ok());
}

TEST_F(ExecutorTest, AddWhileSpinningIsRefused) {
  SingleThreadedExecutor sut(ExecutorOptions{.wait_strategy = WaitStrategy::blocking()});
  std::atomic<bool> spinning{false};
  auto first = subscribe("a", [&](const Sample<Tick>&) {});
  ASSERT_TRUE(sut.add(first).ok());
  auto pub = advertise("a");
  std::thread spinner([&] {
    spinning = true;
    EXPECT_TRUE(sut.spin().ok());
  });
  ASSERT_TRUE(eventually([&] { return spinning.load(); }, 5s));
  std::this_thread::sleep_for(20ms);  // let spin() claim the executor

  auto refused = sut.add(subscribe("b", [](const Sample<Tick>&) {}));

  sut.stop();
  spinner.join();
  EXPECT_FALSE(refused.ok());
}

/// Each wait strategy: a spinning executor on another thread receives what
/// this thread publishes.
class StrategyTest : public ExecutorTest, public ::testing::WithParamInterface<int> {
 protected:
  static WaitStrategy strategy() {
    switch (GetParam()) {
      case 0: return WaitStrategy::busy_spin();
      case 1: return WaitStrategy::spin_yield_sleep(1'000, 10'000);
      default: return WaitStrategy::blocking();
    }
  }
};

TEST_P(StrategyTest, SingleThreadedExecutorDeliversWhileSpinning) {
  auto pub = advertise("ticks");
  std::atomic<std::uint64_t> received{0};
  std::atomic<std::uint64_t> last{0};
  std::atomic<bool> in_order{true};
  // Deep enough for every message: a starved executor must not lose any.
  auto sub = subscribe("ticks",
                       [&](const Sample<Tick>& s) {
                         if (s->sequence != last.load() + 1) {
                           in_order = false;
                         }
                         last = s->sequence;
                         received.fetch_add(1);
                       },
                       {.depth = 256});
  SingleThreadedExecutor sut(ExecutorOptions{.wait_strategy = strategy()});
  ASSERT_TRUE(sut.add(sub).ok());
  std::thread spinner([&] { EXPECT_TRUE(sut.spin().ok()); });

  for (std::uint64_t i = 1; i <= 200; ++i) {
    ASSERT_TRUE(publish_tick(*pub, i));
    if (i % 16 == 0) {
      std::this_thread::sleep_for(1ms);  // sometimes the executor falls asleep
    }
  }
  const bool all = eventually([&] { return received.load() == 200; }, 10s);
  sut.stop();
  spinner.join();

  EXPECT_TRUE(all) << "received " << received.load();
  EXPECT_TRUE(in_order.load());
}

TEST_P(StrategyTest, MultiThreadedExecutorDeliversEachSubscriptionInOrderAndNeverConcurrently) {
  constexpr int kTopics = 4;
  constexpr std::uint64_t kCount = 200;
  struct Track {
    std::atomic<int> inside{0};
    std::atomic<std::uint64_t> last{0};
    std::atomic<std::uint64_t> received{0};
    std::atomic<bool> ok{true};
  };
  std::vector<Track> tracks(kTopics);
  std::vector<std::shared_ptr<Publisher<Tick>>> pubs;
  MultiThreadedExecutor sut(MultiThreadedOptions{.threads = 2, .wait_strategy = strategy()});
  for (int t = 0; t < kTopics; ++t) {
    const std::string topic = "topic" + std::to_string(t);
    pubs.push_back(advertise(topic));
    Track& track = tracks[t];
    auto sub = subscribe(topic,
                         [&track](const Sample<Tick>& s) {
                           if (track.inside.fetch_add(1) != 0) {
                             track.ok = false;  // two callbacks of one subscription at once
                           }
                           if (s->sequence != track.last.load() + 1) {
                             track.ok = false;
                           }
                           track.last = s->sequence;
                           track.received.fetch_add(1);
                           track.inside.fetch_sub(1);
                         },
                         {.depth = 256});
    ASSERT_TRUE(sut.add(sub, {.priority = t % 2}).ok());
  }
  std::thread spinner([&] { EXPECT_TRUE(sut.spin().ok()); });

  for (std::uint64_t i = 1; i <= kCount; ++i) {
    for (auto& pub : pubs) {
      ASSERT_TRUE(publish_tick(*pub, i));
    }
    if (i % 8 == 0) {
      std::this_thread::sleep_for(1ms);
    }
  }
  const bool all = eventually(
      [&] {
        for (auto& t : tracks) {
          if (t.received.load() != kCount) {
            return false;
          }
        }
        return true;
      },
      20s);
  sut.stop();
  spinner.join();

  EXPECT_TRUE(all);
  for (int t = 0; t < kTopics; ++t) {
    EXPECT_EQ(tracks[t].received.load(), kCount) << "topic " << t;
    EXPECT_TRUE(tracks[t].ok.load()) << "topic " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, StrategyTest, ::testing::Values(0, 1, 2), [](const auto& info) {
  return std::string(info.param == 0 ? "BusySpin" : info.param == 1 ? "SpinYieldSleep" : "Blocking");
});

TEST_F(ExecutorTest, MultiThreadedExecutorWithOneWorkerRunsControlFirst) {
  auto control_pub = advertise("control");
  auto diag_pub = advertise("diagnostics");
  std::mutex mutex;
  std::vector<std::string> order;
  auto record = [&](const char* what) {
    std::lock_guard<std::mutex> guard(mutex);
    order.emplace_back(what);
  };
  auto control = subscribe("control", [&](const Sample<Tick>&) { record("control"); });
  auto diag = subscribe("diagnostics", [&](const Sample<Tick>&) { record("diag"); });
  MultiThreadedExecutor sut(MultiThreadedOptions{.threads = 1, .wait_strategy = WaitStrategy::blocking()});
  ASSERT_NO_FATAL_FAILURE(add_diagnostics_first(sut, diag, control, *diag_pub, *control_pub));

  std::thread spinner([&] { EXPECT_TRUE(sut.spin().ok()); });
  const bool all = eventually(
      [&] {
        std::lock_guard<std::mutex> guard(mutex);
        return order.size() == 6;
      },
      10s);
  sut.stop();
  spinner.join();

  ASSERT_TRUE(all);
  const std::vector<std::string> expected{"control", "control", "control", "diag", "diag", "diag"};
  EXPECT_EQ(order, expected);
}

TEST_F(ExecutorTest, DeadlineHandlerFiresWhenNoMessageCame) {
  for (int kind = 0; kind < 2; ++kind) {
    SCOPED_TRACE(kind == 0 ? "single-threaded" : "multi-threaded");
    auto pub = advertise("silent");
    std::atomic<std::uint64_t> missed{0};
    std::atomic<std::uint64_t> messages{0};
    auto sub = subscribe("silent", [&](const Sample<Tick>&) { messages.fetch_add(1); }, {.deadline_ns = 20'000'000});
    sub->on_deadline_missed([&](const DeadlineEvent& event) {
      EXPECT_EQ(event.topic, "silent");
      EXPECT_EQ(event.deadline_ns, 20'000'000);
      missed = event.missed_total;
    });
    auto blocking = WaitStrategy::blocking();
    SingleThreadedExecutor single(ExecutorOptions{.wait_strategy = blocking});
    MultiThreadedExecutor multi(MultiThreadedOptions{.threads = 1, .wait_strategy = blocking});
    auto add = kind == 0 ? single.add(sub) : multi.add(sub);
    ASSERT_TRUE(add.ok());

    std::thread spinner([&] { EXPECT_TRUE(kind == 0 ? single.spin().ok() : multi.spin().ok()); });
    const bool fired = eventually([&] { return missed.load() >= 2; }, 10s);
    kind == 0 ? single.stop() : multi.stop();
    spinner.join();

    EXPECT_TRUE(fired) << "the executor sleeps no longer than the nearest deadline";
    EXPECT_EQ(messages.load(), 0U);
  }
}

TEST_F(ExecutorTest, SpinForReturnsAfterItsDuration) {
  auto sub = subscribe("ticks", [](const Sample<Tick>&) {});
  SingleThreadedExecutor single(ExecutorOptions{.wait_strategy = WaitStrategy::blocking()});
  ASSERT_TRUE(single.add(sub).ok());
  EXPECT_TRUE(single.spin_for(10ms).ok());
  ASSERT_TRUE(single.remove(sub).ok());
  MultiThreadedExecutor multi(MultiThreadedOptions{.threads = 2, .wait_strategy = WaitStrategy::blocking()});
  ASSERT_TRUE(multi.add(sub).ok());
  EXPECT_TRUE(multi.spin_for(10ms).ok());
  EXPECT_TRUE(multi.spin_for(10ms).ok()) << "spins again";
}

TEST_F(ExecutorTest, MultiThreadedExecutorReportsWorkerThreadOptionsItCannotApply) {
  MultiThreadedExecutor sut(MultiThreadedOptions{.threads = 2, .worker_thread = {.cpu_affinity = {CPU_SETSIZE - 1}}});

  auto result = sut.spin_for(10ms);

  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message().find("CPU " + std::to_string(CPU_SETSIZE - 1)), std::string_view::npos)
      << result.error().message();
}

TEST_F(ExecutorTest, MultiThreadedExecutorNeedsAWorker) {
  MultiThreadedExecutor sut(MultiThreadedOptions{.threads = 0});
  EXPECT_FALSE(sut.spin_for(1ms).ok());
}

}  // namespace
}  // namespace axon
