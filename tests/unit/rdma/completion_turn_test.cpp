// The RDMA thread's turn at the completion queue (transports/rdma/completion_turn.hpp):
// a spinner polls only while nobody holds the turn, never after the poller is
// detached, and the turn's holders never run at once (TSan sees a race on the
// poller's plain counter if they did); the RDMA thread sleeps while a spinner
// holds the turn and has it next.
#include "transports/rdma/completion_turn.hpp"

#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>

namespace axon::rdma {
namespace {

/// Counts its polls in a plain integer: only the turn makes that safe.
class CountingPoller final : public CompletionPoller {
 public:
  std::size_t poll_batch() noexcept override {
    ++polls;
    return completions_per_poll;
  }
  std::size_t polls = 0;
  std::size_t completions_per_poll = 0;
};

TEST(CompletionTurn, ASpinnerPollsWhenTheTurnIsFreeAndSaysWhetherItHandledSomething) {
  CompletionTurn turn;
  CountingPoller poller;
  turn.attach(&poller);
  EXPECT_FALSE(turn.poll());  // polled, nothing there
  EXPECT_EQ(poller.polls, 1U);
  poller.completions_per_poll = 3;
  EXPECT_TRUE(turn.poll());
  EXPECT_EQ(poller.polls, 2U);
  EXPECT_EQ(turn.completions_by_spinners(), 3U);
}

TEST(CompletionTurn, ASpinnerDoesNotPollWhileTheRdmaThreadHoldsTheTurn) {
  CompletionTurn turn;
  CountingPoller poller;
  poller.completions_per_poll = 1;
  turn.attach(&poller);
  turn.take();
  EXPECT_FALSE(turn.poll());
  EXPECT_EQ(poller.polls, 0U);
  turn.give_back();
  EXPECT_TRUE(turn.poll());
  EXPECT_EQ(poller.polls, 1U);
}

TEST(CompletionTurn, NothingIsPolledOnceThePollerIsDetached) {
  CompletionTurn turn;
  CountingPoller poller;
  poller.completions_per_poll = 1;
  turn.attach(&poller);
  turn.take();
  turn.detach();
  turn.give_back();
  EXPECT_FALSE(turn.poll());
  EXPECT_EQ(poller.polls, 0U);
  EXPECT_EQ(turn.completions_by_spinners(), 0U);
}

TEST(CompletionTurn, TheRdmaThreadLeavesTheChannelToSpinnersWhilePollsCameDuringTheLastLease) {
  CompletionTurn turn;
  CountingPoller poller;
  turn.attach(&poller);
  SpinnerWatch watch;
  std::int64_t now = 1'000'000'000;
  EXPECT_FALSE(watch.leased(turn, now));  // nobody polled yet
  EXPECT_EQ(watch.next_look_in_ns(now), kSpinnerLeaseNs);

  (void)turn.poll();
  EXPECT_EQ(turn.spinner_polls(), 1U);
  EXPECT_FALSE(watch.leased(turn, now + kSpinnerLeaseNs - 1));  // decided once a lease: not yet
  now += kSpinnerLeaseNs;
  EXPECT_TRUE(watch.leased(turn, now));  // a poll during the last lease
  EXPECT_EQ(watch.next_look_in_ns(now + 10), kSpinnerLeaseNs - 10);

  (void)turn.poll();
  EXPECT_TRUE(watch.leased(turn, now + kSpinnerLeaseNs));
  EXPECT_FALSE(watch.leased(turn, now + 2 * kSpinnerLeaseNs));  // no poll during that lease: the channel again
  EXPECT_EQ(watch.next_look_in_ns(now + 4 * kSpinnerLeaseNs), 0);
}

TEST(CompletionTurn, APollFindingTheTurnTakenIsNotCounted) {
  CompletionTurn turn;
  CountingPoller poller;
  turn.attach(&poller);
  turn.take();
  EXPECT_FALSE(turn.poll());
  turn.give_back();
  EXPECT_EQ(turn.spinner_polls(), 0U);
  EXPECT_EQ(poller.polls, 0U);
}

/// Holds the turn in its first poll until released (a spinner preempted in
/// the middle of a batch); counts every poll.
class HoldingPoller final : public CompletionPoller {
 public:
  std::size_t poll_batch() noexcept override {
    if (polls.fetch_add(1, std::memory_order_relaxed) == 0) {
      holding.store(true, std::memory_order_release);
      while (!released.load(std::memory_order_acquire)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    return 0;
  }
  std::atomic<std::size_t> polls{0};
  std::atomic<bool> holding{false};
  std::atomic<bool> released{false};
};

std::int64_t thread_cpu_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000) + t.tv_nsec;
}

// The RDMA thread and a spinner share a CPU, so the thread often finds the
// turn held by a spinner it preempted: it must sleep (not yield in a loop,
// which held that CPU for milliseconds in the Soft-RoCE guest) and have the
// turn before any spinner polls again.
TEST(CompletionTurn, TheRdmaThreadSleepsWhileASpinnerHoldsTheTurnAndHasItNext) {
  CompletionTurn turn;
  HoldingPoller poller;
  turn.attach(&poller);
  std::thread holder([&] { (void)turn.poll(); });
  while (!poller.holding.load(std::memory_order_acquire)) {
    std::this_thread::yield();
  }
  std::atomic<bool> taken{false};
  std::atomic<std::size_t> polls_when_taken{0};
  std::atomic<std::int64_t> waited_cpu_ns{0};
  std::atomic<bool> give_back{false};
  std::thread rdma_thread([&] {
    const std::int64_t before = thread_cpu_ns();
    turn.take();
    waited_cpu_ns.store(thread_cpu_ns() - before, std::memory_order_relaxed);
    polls_when_taken.store(poller.polls.load(std::memory_order_relaxed), std::memory_order_relaxed);
    taken.store(true, std::memory_order_release);
    while (!give_back.load(std::memory_order_acquire)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    turn.give_back();
  });
  while (!turn.wanted()) {
    std::this_thread::yield();
  }
  std::atomic<bool> spinning{true};
  std::thread spinner([&] {
    while (spinning.load(std::memory_order_relaxed)) {
      (void)turn.poll();
    }
  });

  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_FALSE(taken.load(std::memory_order_acquire)) << "the turn is still held";
  EXPECT_EQ(poller.polls.load(std::memory_order_relaxed), 1U) << "a spinner polled while the RDMA thread waited";
  poller.released.store(true, std::memory_order_release);
  while (!taken.load(std::memory_order_acquire)) {
    std::this_thread::yield();
  }
  EXPECT_EQ(polls_when_taken.load(std::memory_order_relaxed), 1U) << "a spinner polled before the RDMA thread";
  // Yielding in a loop for the 60 ms took most of a core; sleeping takes microseconds.
  EXPECT_LT(waited_cpu_ns.load(std::memory_order_relaxed), 20'000'000);
  give_back.store(true, std::memory_order_release);
  rdma_thread.join();
  holder.join();
  while (poller.polls.load(std::memory_order_relaxed) < 2) {  // the spinner polls again once it is given back
    std::this_thread::yield();
  }
  spinning.store(false, std::memory_order_relaxed);
  spinner.join();
  EXPECT_FALSE(turn.wanted());
}

TEST(CompletionTurn, HoldersNeverRunAtOnce) {
  CompletionTurn turn;
  CountingPoller poller;
  poller.completions_per_poll = 1;
  turn.attach(&poller);
  constexpr int kRounds = 20000;
  std::atomic<bool> spinning{true};
  std::size_t handled_by_spinner = 0;
  std::thread spinner([&] {
    while (spinning.load(std::memory_order_relaxed)) {
      handled_by_spinner += turn.poll() ? 1 : 0;
    }
  });
  std::size_t by_thread = 0;
  for (int i = 0; i < kRounds; ++i) {
    turn.take();
    poller.polls += 1;  // what the RDMA thread's pass does to the same state
    ++by_thread;
    turn.give_back();
  }
  spinning.store(false, std::memory_order_relaxed);
  spinner.join();
  EXPECT_EQ(poller.polls, by_thread + handled_by_spinner);
  EXPECT_EQ(turn.completions_by_spinners(), handled_by_spinner);
}

}  // namespace
}  // namespace axon::rdma
