// SocketAndWordsWait: one sleep on futex words and a socket (io_uring, Linux
// 6.7+); skipped with a message where io_uring cannot wait on futex words.
#include "src/base/socket_and_words_wait.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

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

// ---- wait_and_receive(): the wake-up brings the datagrams ----

std::string text_of(const ReceivedDatagram& d) {
  return {reinterpret_cast<const char*>(d.bytes.data()), d.bytes.size()};
}

TEST_F(SocketAndWordsWaitTest, ReceivesTheDatagramsThatWokeItInOrderWithTheirSender) {
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  std::thread sender([&] {
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(::send(sockets.fd[0], "ab", 2, 0), 2);
    EXPECT_EQ(::send(sockets.fd[0], "cde", 3, 0), 3);
  });
  std::vector<std::string> texts;
  bool all_read = false;
  for (int round = 0; round < 2 && texts.size() < 2; ++round) {  // the second may come after the first woke it
    const auto received = sut->wait_and_receive(words, values, sockets.receiver(), 2 - texts.size(), 64, kLongNs);
    EXPECT_TRUE(received.woken.readable);
    EXPECT_FALSE(received.woken.word_moved);
    for (const ReceivedDatagram& d : received.datagrams) {
      texts.push_back(text_of(d));
      EXPECT_EQ(d.size, d.bytes.size());
      EXPECT_EQ(d.from_ipv4, INADDR_LOOPBACK);
      sockaddr_in sender_address{};
      socklen_t length = sizeof(sender_address);
      ASSERT_EQ(::getsockname(sockets.fd[0], reinterpret_cast<sockaddr*>(&sender_address), &length), 0);
      EXPECT_EQ(d.from_port, ntohs(sender_address.sin_port));
    }
    all_read = received.all_read;
  }
  sender.join();
  EXPECT_EQ(texts, (std::vector<std::string>{"ab", "cde"}));
  EXPECT_TRUE(all_read);
}

TEST_F(SocketAndWordsWaitTest, ReadsNoMoreThanAskedAndLeavesTheRestInTheSocket) {
  for (const char* text : {"1", "2", "3"}) {
    ASSERT_EQ(::send(sockets.fd[0], text, 1, 0), 1);
  }
  std::this_thread::sleep_for(5ms);
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  const auto received = sut->wait_and_receive(words, values, sockets.receiver(), 2, 64, kLongNs);
  ASSERT_EQ(received.datagrams.size(), 2U);
  EXPECT_EQ(text_of(received.datagrams[0]), "1");
  EXPECT_EQ(text_of(received.datagrams[1]), "2");
  EXPECT_TRUE(received.all_read);
  char byte = 0;
  EXPECT_EQ(::recv(sockets.receiver(), &byte, 1, MSG_DONTWAIT), 1);
  EXPECT_EQ(byte, '3');
}

TEST_F(SocketAndWordsWaitTest, AWordWakeCancelsItsReceivesSoLaterDatagramsStayInTheSocket) {
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  std::thread waker([&] {
    std::this_thread::sleep_for(20ms);
    wake_all(word);
  });
  const auto received = sut->wait_and_receive(words, values, sockets.receiver(), 4, 64, kLongNs);
  waker.join();
  EXPECT_TRUE(received.woken.word_moved);
  EXPECT_FALSE(received.woken.readable);
  EXPECT_TRUE(received.datagrams.empty());
  EXPECT_FALSE(received.all_read);
  // Were a receive still armed, it would take this datagram from the socket.
  sockets.send_to_receiver();
  std::this_thread::sleep_for(5ms);
  char byte = 0;
  EXPECT_EQ(::recv(sockets.receiver(), &byte, 1, MSG_DONTWAIT), 1);
}

TEST_F(SocketAndWordsWaitTest, ReportsADatagramLongerThanItsBufferAsCut) {
  const std::string long_text(100, 'x');
  ASSERT_EQ(::send(sockets.fd[0], long_text.data(), long_text.size(), 0), 100);
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  const auto received = sut->wait_and_receive(words, values, sockets.receiver(), 1, 16, kLongNs);
  ASSERT_EQ(received.datagrams.size(), 1U);
  EXPECT_EQ(received.datagrams[0].size, 100U);
  EXPECT_EQ(received.datagrams[0].bytes.size(), 16U);
}

TEST_F(SocketAndWordsWaitTest, ATimedOutReceiveTakesNothingAndPollingWaitsStillWork) {
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  const auto received = sut->wait_and_receive(words, values, sockets.receiver(), 3, 64, 30'000'000);
  EXPECT_TRUE(received.woken.timed_out);
  EXPECT_TRUE(received.datagrams.empty());
  // The same ring, now watching the socket without reading it.
  sockets.send_to_receiver();
  const auto woken = sut->wait(words, values, sockets.receiver(), kLongNs);
  EXPECT_TRUE(woken.readable);
  char byte = 0;
  EXPECT_EQ(::recv(sockets.receiver(), &byte, 1, MSG_DONTWAIT), 1);
}

}  // namespace
}  // namespace axon::futex
