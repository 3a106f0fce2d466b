// DatagramWait: the datagrams that end a sleep on futex words are read in
// the same system call (futex::WordsAndFdWait's receives, Linux 6.7+);
// skipped with a message where io_uring cannot wait on futex words.
#include "transports/udp/datagram_wait.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/socket_pair.hpp"

namespace axon::udp {
namespace {

using namespace std::chrono_literals;
using futex::wake_all;

constexpr std::int64_t kLongNs = 10'000'000'000;  ///< A bound that only a broken wait reaches.

class DatagramWaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!futex::WordsAndFdWait::supported()) {
      GTEST_SKIP() << "io_uring cannot wait on futex words on this kernel (IORING_OP_FUTEX_WAITV: Linux 6.7+), "
                      "or io_uring is disabled (kernel.io_uring_disabled)";
    }
    auto created = futex::WordsAndFdWait::create();
    ASSERT_TRUE(created) << created.error().message();
    ring = std::move(*created);
  }
  std::uint32_t seen(const WakeWord& w) const { return w.sequence.load(std::memory_order_acquire); }

  std::unique_ptr<futex::WordsAndFdWait> ring;
  DatagramWait datagrams;
  test::SocketPair sockets;
  WakeWord word;
};

std::string text_of(const ReceivedDatagram& d) {
  return {reinterpret_cast<const char*>(d.bytes.data()), d.bytes.size()};
}

TEST_F(DatagramWaitTest, ReceivesTheDatagramsThatWokeItInOrderWithTheirSender) {
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
    const auto received =
        datagrams.wait_and_receive(*ring, words, values, sockets.receiver(), 2 - texts.size(), 64, kLongNs);
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

TEST_F(DatagramWaitTest, ReadsNoMoreThanAskedAndLeavesTheRestInTheSocket) {
  for (const char* text : {"1", "2", "3"}) {
    ASSERT_EQ(::send(sockets.fd[0], text, 1, 0), 1);
  }
  std::this_thread::sleep_for(5ms);
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  const auto received = datagrams.wait_and_receive(*ring, words, values, sockets.receiver(), 2, 64, kLongNs);
  ASSERT_EQ(received.datagrams.size(), 2U);
  EXPECT_EQ(text_of(received.datagrams[0]), "1");
  EXPECT_EQ(text_of(received.datagrams[1]), "2");
  EXPECT_TRUE(received.all_read);
  char byte = 0;
  EXPECT_EQ(::recv(sockets.receiver(), &byte, 1, MSG_DONTWAIT), 1);
  EXPECT_EQ(byte, '3');
}

TEST_F(DatagramWaitTest, AWordWakeCancelsItsReceivesSoLaterDatagramsStayInTheSocket) {
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  std::thread waker([&] {
    std::this_thread::sleep_for(20ms);
    wake_all(word);
  });
  const auto received = datagrams.wait_and_receive(*ring, words, values, sockets.receiver(), 4, 64, kLongNs);
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

TEST_F(DatagramWaitTest, ReportsADatagramLongerThanItsBufferAsCut) {
  const std::string long_text(100, 'x');
  ASSERT_EQ(::send(sockets.fd[0], long_text.data(), long_text.size(), 0), 100);
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  const auto received = datagrams.wait_and_receive(*ring, words, values, sockets.receiver(), 1, 16, kLongNs);
  ASSERT_EQ(received.datagrams.size(), 1U);
  EXPECT_EQ(received.datagrams[0].size, 100U);
  EXPECT_EQ(received.datagrams[0].bytes.size(), 16U);
}

TEST_F(DatagramWaitTest, ATimedOutReceiveTakesNothingAndPollingWaitsStillWork) {
  WakeWord* const words[] = {&word};
  const std::uint32_t values[] = {seen(word)};
  const auto received = datagrams.wait_and_receive(*ring, words, values, sockets.receiver(), 3, 64, 30'000'000);
  EXPECT_TRUE(received.woken.timed_out);
  EXPECT_TRUE(received.datagrams.empty());
  // The same ring, now watching the socket without reading it.
  sockets.send_to_receiver();
  const auto woken = ring->wait(words, values, sockets.receiver(), kLongNs);
  EXPECT_TRUE(woken.readable);
  char byte = 0;
  EXPECT_EQ(::recv(sockets.receiver(), &byte, 1, MSG_DONTWAIT), 1);
}

}  // namespace
}  // namespace axon::udp
