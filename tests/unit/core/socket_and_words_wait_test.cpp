// SocketAndWordsWait: one sleep on futex words and a socket (io_uring, Linux
// 6.7+); skipped with a message where io_uring cannot wait on futex words.
#include "src/socket_and_words_wait.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace axon::futex {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kLongNs = 10'000'000'000;  ///< A bound that only a broken wait reaches.

/// Two UDP sockets on 127.0.0.1, each connected to the other.
class SocketPair {
 public:
  SocketPair() {
    sockaddr_in address[2] = {};
    for (int i = 0; i < 2; ++i) {
      fd[i] = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      address[i].sin_family = AF_INET;
      address[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      socklen_t length = sizeof(address[i]);
      EXPECT_EQ(::bind(fd[i], reinterpret_cast<sockaddr*>(&address[i]), sizeof(address[i])), 0);
      EXPECT_EQ(::getsockname(fd[i], reinterpret_cast<sockaddr*>(&address[i]), &length), 0);
    }
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(::connect(fd[i], reinterpret_cast<sockaddr*>(&address[1 - i]), sizeof(address[i])), 0);
    }
  }
  ~SocketPair() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;
  void send_to_receiver() const { EXPECT_EQ(::send(fd[0], "x", 1, 0), 1); }
  void drain_receiver() const {
    char byte = 0;
    while (::recv(fd[1], &byte, 1, MSG_DONTWAIT) == 1) {
    }
  }
  int receiver() const { return fd[1]; }
  int fd[2] = {-1, -1};
};

class SocketAndWordsWaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!SocketAndWordsWait::supported()) {
      GTEST_SKIP() << "io_uring cannot wait on futex words on this kernel (IORING_OP_FUTEX_WAITV: Linux 6.7+), "
                      "or io_uring is disabled (kernel.io_uring_disabled)";
    }
    auto created = SocketAndWordsWait::create();
    ASSERT_TRUE(created) << created.error().message();
    sut = std::move(*created);
  }
  std::uint32_t seen(const WakeWord& w) const { return w.sequence.load(std::memory_order_acquire); }

  std::unique_ptr<SocketAndWordsWait> sut;
  SocketPair sockets;
  WakeWord word;
  WakeWord other;
};

TEST_F(SocketAndWordsWaitTest, WakesWhenAWordMoves) {
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

TEST_F(SocketAndWordsWaitTest, WakesWhenTheSocketIsReadable) {
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

TEST_F(SocketAndWordsWaitTest, ReturnsAtOnceForAWordThatMovedAlready) {
  WakeWord* const words[] = {&word};
  const std::uint32_t stale[] = {seen(word) + 1};
  const auto woken = sut->wait(words, stale, sockets.receiver(), kLongNs);
  EXPECT_TRUE(woken.word_moved);
}

TEST_F(SocketAndWordsWaitTest, TimesOutWithNothingElse) {
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  const auto woken = sut->wait(words, values, sockets.receiver(), 30'000'000);
  EXPECT_TRUE(woken.timed_out);
  EXPECT_FALSE(woken.word_moved);
  EXPECT_FALSE(woken.readable);
}

TEST_F(SocketAndWordsWaitTest, KeepsItsWordWaitAcrossSocketWakeUpsAndRearmsForOtherWords) {
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

TEST_F(SocketAndWordsWaitTest, WaitsOnWordsAloneWithoutASocket) {
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

}  // namespace
}  // namespace axon::futex
