// The RDMA thread's turn at the completion queue (transports/rdma/completion_turn.hpp):
// a spinner polls only while nobody holds the turn, never after the poller is
// detached, and the turn's holders never run at once (TSan sees a race on the
// poller's plain counter if they did).
#include "transports/rdma/completion_turn.hpp"

#include <gtest/gtest.h>

#include <atomic>
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
