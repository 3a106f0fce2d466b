// A third transport plugs into the scheduler through WaitSource alone: a
// fake whose messages arrive on an eventfd (no socket, no WakeWord bump, no
// thread of its own). WaitSet and both executors sleep on its fd through its
// sleep(), its after_sleep() delivers, and the waiter gets the message. A
// waiter that spins instead polls it (poll(), as RDMA's busy-spinning
// subscribers poll the completion queue) and never sleeps.
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "axon/axon.hpp"
#include "src/base/words_and_fd_wait.hpp"
#include "tests/unit/scheduler/scheduler_test_util.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::Tick;

/// The fake transport's subscriber side: messages it delivered wait in an
/// inbox; nothing ever moves its word (it has no publisher of its own).
class FakePort final : public SubscriberPort {
 public:
  void deliver(Tick tick) {
    const std::lock_guard lock(mutex_);
    inbox_.push_back(tick);
  }
  TakeResult<ReceivedChunk> take() noexcept override {
    const std::lock_guard lock(mutex_);
    if (inbox_.empty()) {
      return kNothingQueued;
    }
    Tick& slot = taken_[next_slot_++ % taken_.size()];
    slot = inbox_.front();
    inbox_.pop_front();
    ReceivedChunk chunk;
    chunk.payload = reinterpret_cast<const std::byte*>(&slot);
    chunk.info.sequence = slot.sequence;
    chunk.info.payload_bytes = sizeof(Tick);
    chunk.same_process = true;
    return chunk;
  }
  void release(const ReceivedChunk& /*chunk*/) noexcept override {}
  void reject(const ReceivedChunk& /*chunk*/, std::string_view /*reason*/) noexcept override {}
  [[nodiscard]] SubscriberCounters counters() const noexcept override { return {}; }
  [[nodiscard]] std::uint64_t publishers_lost() const noexcept override { return 0; }
  [[nodiscard]] std::uint32_t publisher_count() noexcept override { return 1; }
  [[nodiscard]] bool has_data() noexcept override {
    const std::lock_guard lock(mutex_);
    return !inbox_.empty();
  }
  [[nodiscard]] WakeWord* wake_word() noexcept override { return &word_; }
  [[nodiscard]] WaitSource* wait_source() noexcept override { return source_; }
  void set_wait_source(WaitSource* source) noexcept { source_ = source; }

 private:
  std::mutex mutex_;
  std::deque<Tick> inbox_;
  std::array<Tick, 16> taken_{};
  std::size_t next_slot_ = 0;
  WakeWord word_;
  WaitSource* source_ = nullptr;
};

/// The fake transport's wire and wait source: send() leaves a message on the
/// wire and makes an eventfd readable, as an RDMA completion would make its
/// completion channel readable; only a waiter's after_sleep() moves it to
/// the port.
class FakeWaitSource final : public WaitSource {
 public:
  explicit FakeWaitSource(FakePort& port) : port_(port), fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  ~FakeWaitSource() override { ::close(fd_); }
  FakeWaitSource(const FakeWaitSource&) = delete;
  FakeWaitSource& operator=(const FakeWaitSource&) = delete;

  void send(Tick tick) {
    {
      const std::lock_guard lock(mutex_);
      wire_.push_back(tick);
    }
    const std::uint64_t one = 1;
    EXPECT_EQ(::write(fd_, &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
  }

  Slept sleep(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen,
              std::int64_t timeout_ns) noexcept override {
    futex::WordsAndFdWait* wait = futex::this_thread_words_and_fd_wait();
    if (wait == nullptr) {
      return Slept::kDidNotSleep;
    }
    sleeps.fetch_add(1, std::memory_order_relaxed);
    return wait->wait(words, seen, fd_, timeout_ns).readable ? Slept::kArrived : Slept::kWoken;
  }
  void after_sleep() noexcept override {
    after_sleeps.fetch_add(1, std::memory_order_relaxed);
    std::uint64_t count = 0;
    (void)!::read(fd_, &count, sizeof(count));
    (void)deliver_wire();
  }
  /// A spinner's look at the wire, as RDMA's completion queue polled by a
  /// busy-spinning subscriber: no read of the fd.
  bool poll() noexcept override {
    polls.fetch_add(1, std::memory_order_relaxed);
    return deliver_wire();
  }

  std::atomic<int> sleeps{0};
  std::atomic<int> after_sleeps{0};
  std::atomic<int> polls{0};

 private:
  bool deliver_wire() noexcept {
    const std::lock_guard lock(mutex_);
    const bool any = !wire_.empty();
    while (!wire_.empty()) {
      port_.deliver(wire_.front());
      wire_.pop_front();
    }
    return any;
  }

  FakePort& port_;
  int fd_;
  std::mutex mutex_;
  std::deque<Tick> wire_;
};

/// The fake transport's port, source and a subscriber of it.
class FakeTransportTest : public ::testing::Test {
 protected:
  void SetUp() override { port->set_wait_source(&source); }

  std::shared_ptr<FakePort> port = std::make_shared<FakePort>();
  FakeWaitSource source{*port};
  std::shared_ptr<Subscriber<Tick>> subscriber = std::make_shared<Subscriber<Tick>>(port, "fake", SubscriberQos{});
};

class WaitSourceTest : public FakeTransportTest {
 protected:
  void SetUp() override {
    if (!futex::WordsAndFdWait::supported()) {
      GTEST_SKIP() << "io_uring cannot wait on futex words here (Linux 6.7+): wait sources are not used";
    }
    FakeTransportTest::SetUp();
  }
  /// Sends `tick` once the waiter is asleep in the source (a bounded wait).
  std::thread send_when_asleep(Tick tick) {
    return std::thread([this, tick] {
      (void)test::eventually([&] { return source.sleeps.load() > 0; }, 5s);
      std::this_thread::sleep_for(5ms);  // well into its io_uring sleep
      source.send(tick);
    });
  }

  template <class Executor>
  void expect_callback_gets_what_the_source_delivers(Executor& executor) {
    std::atomic<std::uint64_t> got{0};
    auto subscription = std::make_shared<CallbackSubscription<Tick>>(subscriber, [&](const Sample<Tick>& s) {
      got.store(s->sequence);
      executor.stop();
    });
    ASSERT_TRUE(executor.add(subscription));
    std::thread sender = send_when_asleep(Tick{.sequence = 9, .source = 0});
    ASSERT_TRUE(executor.spin_for(10s));
    sender.join();
    EXPECT_EQ(got.load(), 9U) << "nothing but the source's after_sleep() delivers the message";
    EXPECT_GE(source.after_sleeps.load(), 1);
  }
};

TEST_F(WaitSourceTest, AWaitSetSleepsOnTheSourceAndItsReadableHookDelivers) {
  WaitSet waits(WaitStrategy::blocking());
  ASSERT_TRUE(waits.attach(subscriber));
  std::thread sender = send_when_asleep(Tick{.sequence = 7, .source = 0});
  auto out = waits.wait(10s);
  sender.join();
  ASSERT_TRUE(out);
  ASSERT_TRUE(waits.is_ready(0)) << "nothing but the source's after_sleep() delivers the message";
  EXPECT_GE(source.after_sleeps.load(), 1);
  auto sample = subscriber->take();
  ASSERT_TRUE(sample);
  EXPECT_EQ((*sample)->sequence, 7U);
}

TEST_F(WaitSourceTest, ASingleThreadedExecutorsBlockingWaitSleepsOnTheSource) {
  SingleThreadedExecutor executor(ExecutorOptions{.wait_strategy = WaitStrategy::blocking()});
  expect_callback_gets_what_the_source_delivers(executor);
}

TEST_F(WaitSourceTest, AMultiThreadedExecutorsBlockingWaitSleepsOnTheSource) {
  MultiThreadedExecutor executor(MultiThreadedOptions{.threads = 2, .wait_strategy = WaitStrategy::blocking()});
  expect_callback_gets_what_the_source_delivers(executor);
}

// A waiter that spins polls the source between its looks at the queue:
// what arrives reaches it with no sleep and no wake-up (no io_uring needed).
class WaitSourcePollTest : public FakeTransportTest {
 protected:
  /// Sends `tick` once the waiter has polled (a bounded wait).
  std::thread send_when_polling(Tick tick) {
    return std::thread([this, tick] {
      (void)test::eventually([&] { return source.polls.load() > 0; }, 5s);
      source.send(tick);
    });
  }
};

TEST_F(WaitSourcePollTest, ABusySpinningWaitSetPollsTheSourceAndGetsWhatItDelivers) {
  WaitSet waits(WaitStrategy::busy_spin());
  ASSERT_TRUE(waits.attach(subscriber));
  std::thread sender = send_when_polling(Tick{.sequence = 5, .source = 0});
  auto out = waits.wait(10s);
  sender.join();
  ASSERT_TRUE(out);
  ASSERT_TRUE(waits.is_ready(0)) << "nothing but the source's poll() delivers the message";
  EXPECT_EQ(source.after_sleeps.load(), 0) << "a busy spinner never sleeps";
  auto sample = subscriber->take();
  ASSERT_TRUE(sample);
  EXPECT_EQ((*sample)->sequence, 5U);
}

TEST_F(WaitSourcePollTest, ASpinYieldSleepExecutorPollsTheSourceWhileItSpins) {
  SingleThreadedExecutor executor(
      ExecutorOptions{.wait_strategy = WaitStrategy::spin_yield_sleep(60'000'000'000, 0)});  // spins throughout
  std::atomic<std::uint64_t> got{0};
  auto subscription = std::make_shared<CallbackSubscription<Tick>>(subscriber, [&](const Sample<Tick>& s) {
    got.store(s->sequence);
    executor.stop();
  });
  ASSERT_TRUE(executor.add(subscription));
  std::thread sender = send_when_polling(Tick{.sequence = 6, .source = 0});
  ASSERT_TRUE(executor.spin_for(10s));
  sender.join();
  EXPECT_EQ(got.load(), 6U);
  EXPECT_EQ(source.after_sleeps.load(), 0);
}

}  // namespace
}  // namespace axon
