// WordsAndFdWait: one sleep on futex words and a file descriptor (io_uring,
// Linux 6.7+); skipped with a message where io_uring cannot wait on futex
// words. Its receives are tested with UDP's DatagramWait (tests/unit/udp).
#include "src/base/words_and_fd_wait.hpp"

#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "tests/support/socket_pair.hpp"

namespace axon::futex {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kLongNs = 10'000'000'000;  ///< A bound that only a broken wait reaches.

class WordsAndFdWaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!WordsAndFdWait::supported()) {
      GTEST_SKIP() << "io_uring cannot wait on futex words on this kernel (IORING_OP_FUTEX_WAITV: Linux 6.7+), "
                      "or io_uring is disabled (kernel.io_uring_disabled)";
    }
    auto created = WordsAndFdWait::create();
    ASSERT_TRUE(created) << created.error().message();
    sut = std::move(*created);
  }
  std::uint32_t seen(const WakeWord& w) const { return w.sequence.load(std::memory_order_acquire); }

  std::unique_ptr<WordsAndFdWait> sut;
  test::SocketPair sockets;
  WakeWord word;
  WakeWord other;
};

TEST_F(WordsAndFdWaitTest, WakesWhenAWordMoves) {
  WakeWord* const words[] = {&word, &other};
  const std::uint32_t values[] = {seen(word), seen(other)};
  std::thread waker([&] {
    std::this_thread::sleep_for(20ms);
    wake_all(other);
  });
  const auto woken = sut->wait(words, values, sockets.receiver(), kLongNs);
  waker.join();
  EXPECT_TRUE(woken.word_moved);
  EXPECT_FALSE(woken.readable);
  EXPECT_FALSE(woken.timed_out);
}

TEST_F(WordsAndFdWaitTest, WakesWhenTheSocketIsReadable) {
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  std::thread sender([&] {
    std::this_thread::sleep_for(20ms);
    sockets.send_to_receiver();
  });
  const auto woken = sut->wait(words, values, sockets.receiver(), kLongNs);
  sender.join();
  EXPECT_TRUE(woken.readable);
  EXPECT_FALSE(woken.word_moved);
}

TEST_F(WordsAndFdWaitTest, ReturnsAtOnceForAWordThatMovedAlready) {
  WakeWord* const words[] = {&word};
  const std::uint32_t stale[] = {seen(word) + 1};
  const auto woken = sut->wait(words, stale, sockets.receiver(), kLongNs);
  EXPECT_TRUE(woken.word_moved);
}

TEST_F(WordsAndFdWaitTest, TimesOutWithNothingElse) {
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  const auto woken = sut->wait(words, values, sockets.receiver(), 30'000'000);
  EXPECT_TRUE(woken.timed_out);
  EXPECT_FALSE(woken.word_moved);
  EXPECT_FALSE(woken.readable);
}

TEST_F(WordsAndFdWaitTest, KeepsItsWordWaitAcrossSocketWakeUpsAndRearmsForOtherWords) {
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  for (int i = 0; i < 3; ++i) {  // the futex request stays armed across these
    sockets.send_to_receiver();
    const auto woken = sut->wait(words, values, sockets.receiver(), kLongNs);
    EXPECT_TRUE(woken.readable) << "round " << i;
    EXPECT_FALSE(woken.word_moved) << "round " << i;
    sockets.drain_receiver();
  }
  // Another set of words: the old request is cancelled, the new one watches `other`.
  WakeWord* const others[] = {&other};
  const std::uint32_t other_values[] = {seen(other)};
  std::thread waker([&] {
    std::this_thread::sleep_for(20ms);
    wake_all(word);  // not watched any more: must not end the wait
    std::this_thread::sleep_for(20ms);
    wake_all(other);
  });
  const auto woken = sut->wait(others, other_values, sockets.receiver(), kLongNs);
  waker.join();
  EXPECT_TRUE(woken.word_moved);
  EXPECT_FALSE(woken.readable);
  EXPECT_NE(seen(other), other_values[0]);
}

TEST_F(WordsAndFdWaitTest, WaitsOnWordsAloneWithoutASocket) {
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  std::thread waker([&] {
    std::this_thread::sleep_for(20ms);
    wake_all(word);
  });
  const auto woken = sut->wait(words, values, -1, kLongNs);
  waker.join();
  EXPECT_TRUE(woken.word_moved);
}

TEST_F(WordsAndFdWaitTest, WakesForAnyReadableFdNotOnlyASocket) {
  const int event = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ASSERT_GE(event, 0);
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  std::thread signaller([&] {
    std::this_thread::sleep_for(20ms);
    const std::uint64_t one = 1;
    EXPECT_EQ(::write(event, &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
  });
  const auto woken = sut->wait(words, values, event, kLongNs);
  signaller.join();
  EXPECT_TRUE(woken.readable);
  EXPECT_FALSE(woken.word_moved);
  ::close(event);
}

}  // namespace
}  // namespace axon::futex
