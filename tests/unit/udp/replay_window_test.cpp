// The replay window: duplicates, too old, far ahead, reordered within the
// window, and sessions (a restarted sender; the least recent session evicted).
#include "transports/udp/replay_window.hpp"

#include <gtest/gtest.h>

namespace axon::udp {
namespace {

constexpr std::uint64_t kBits = ReplayWindow::kBits;

void accept(ReplayWindow& w, std::uint64_t counter) {
  ASSERT_TRUE(w.fresh(counter)) << counter;
  w.accept(counter);
}

TEST(ReplayWindow, AcceptsTheFirstCounterAndRefusesItAgain) {
  ReplayWindow sut;
  accept(sut, 7);
  EXPECT_FALSE(sut.fresh(7));
}

TEST(ReplayWindow, AcceptsCountersReorderedInsideTheWindowOnce) {
  ReplayWindow sut;
  accept(sut, 100);
  accept(sut, 98);
  accept(sut, 99);
  accept(sut, 101);
  for (std::uint64_t c = 98; c <= 101; ++c) {
    EXPECT_FALSE(sut.fresh(c)) << c;
  }
  EXPECT_TRUE(sut.fresh(97));
}

TEST(ReplayWindow, RefusesACounterAtOrPastTheWindowsOldEdge) {
  ReplayWindow sut;
  accept(sut, 10 * kBits);
  EXPECT_TRUE(sut.fresh(10 * kBits - kBits + 1));  // the oldest counter the window still tells
  EXPECT_FALSE(sut.fresh(10 * kBits - kBits));     // too old to tell: refused
  EXPECT_FALSE(sut.fresh(1));
}

TEST(ReplayWindow, ForgetsNothingInsideTheWindowWhenItSlidesBySmallSteps) {
  ReplayWindow sut;
  for (std::uint64_t c = 1; c <= 3 * kBits; c += 3) {
    accept(sut, c);
  }
  const std::uint64_t top = 3 * kBits - 2;
  for (std::uint64_t c = top - kBits + 1; c <= top; ++c) {
    EXPECT_EQ(sut.fresh(c), c % 3 != 1) << c;
  }
}

TEST(ReplayWindow, AFarJumpAheadClearsTheWindowButRefusesTheOldCounters) {
  ReplayWindow sut;
  accept(sut, 5);
  accept(sut, 6);
  accept(sut, 5 + 100 * kBits);
  EXPECT_FALSE(sut.fresh(5));
  EXPECT_FALSE(sut.fresh(6));
  EXPECT_TRUE(sut.fresh(5 + 100 * kBits - 1));  // inside the new window, not seen: a late one
  EXPECT_FALSE(sut.fresh(5 + 100 * kBits));
}

TEST(ReplayWindow, AJumpOfLessThanAWindowClearsOnlyWhatItSlidesOver) {
  ReplayWindow sut;
  accept(sut, 1000);
  accept(sut, 1000 + kBits - 1);  // 1000 is now the oldest counter the window tells
  EXPECT_FALSE(sut.fresh(1000));
  // Counters of the old window position whose bits were reused are new again, once.
  accept(sut, 1000 + kBits / 2);
  EXPECT_FALSE(sut.fresh(1000 + kBits / 2));
}

TEST(ReplayWindows, KeepsAWindowPerSessionSoARestartedSenderIsAccepted) {
  ReplayWindows sut(4);
  sut.accept(1, 50);
  EXPECT_FALSE(sut.fresh(1, 50));
  EXPECT_TRUE(sut.fresh(2, 50));  // another session (the sender restarted): its own counters
  sut.accept(2, 1);
  EXPECT_FALSE(sut.fresh(2, 1));
  EXPECT_FALSE(sut.fresh(1, 50));
}

TEST(ReplayWindows, EvictsTheLeastRecentlyHeardSessionWhenFull) {
  ReplayWindows sut(2);
  sut.accept(1, 1);
  sut.accept(2, 1);
  sut.accept(1, 2);  // session 1 heard last
  sut.accept(3, 1);  // full: session 2 goes

  EXPECT_EQ(sut.sessions(), 2U);
  EXPECT_FALSE(sut.fresh(1, 2));
  EXPECT_FALSE(sut.fresh(3, 1));
  EXPECT_TRUE(sut.fresh(2, 1));  // forgotten (docs/security.md says what that allows)
}

TEST(ReplayWindows, KeepsTheMostRecentSessionsThroughManyEvictions) {
  ReplayWindows sut(8);
  for (std::uint64_t s = 1; s <= 1000; ++s) {
    sut.accept(s * 0x10001, 1);  // sessions whose table slots collide and wrap
    sut.accept(s * 0x10001, 2);
  }
  EXPECT_EQ(sut.sessions(), 8U);
  for (std::uint64_t s = 993; s <= 1000; ++s) {
    EXPECT_FALSE(sut.fresh(s * 0x10001, 1)) << s;
    EXPECT_FALSE(sut.fresh(s * 0x10001, 2)) << s;
    EXPECT_TRUE(sut.fresh(s * 0x10001, 3)) << s;
  }
  EXPECT_TRUE(sut.fresh(992 * 0x10001, 1));
}

}  // namespace
}  // namespace axon::udp
