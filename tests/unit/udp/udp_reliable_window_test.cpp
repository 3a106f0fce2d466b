// A RELIABLE stream never loses a message while both ends are alive: a writer
// that sends 1 MiB messages as fast as publish() lets it, to a receiver that
// cannot keep up (small socket buffer, short resend history), must hold back
// rather than evict what the receiver has not acknowledged (a GAP would make
// the receiver count the message as lost). Two "hosts" of one process on
// loopback, as in udp_loopback_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "axon/axon.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/patterned_message.hpp"
#include "tests/support/two_host_loopback.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::routed_to;

/// Exactly 1 MiB, filled with a pattern of its sequence (test::fill(), test::intact()).
struct MebibyteMessage : test::PatternedMessage<1U << 20U, 1024, 13> {
  static constexpr std::string_view kAxonTypeName = "axon_test::MebibyteMessage";
};

class UdpReliableWindow : public ::testing::Test {
 protected:
  std::shared_ptr<Node> node(const std::string& name, const std::string& shm) const { return hosts.node(name, shm); }

  // A resend history of 8 messages and a receive buffer of about one
  // message: the sender outruns the receiver by far more than its history.
  test::TwoHostLoopback hosts{"axon_udp_window",
                              {.topics = "  - {name: window, reliability: reliable, history: keep_all, depth: 8}\n",
                               .liveliness_timeout_ms = 2000,
                               .history_depth = 8,
                               .node_pool = "{chunk_classes: [{payload_bytes: 1048576, count: 32}]}",
                               .receive_buffer_bytes = "1 MiB"}};
  std::shared_ptr<Node> receiver;
  std::shared_ptr<Node> sender;
  std::shared_ptr<Subscriber<MebibyteMessage>> subscriber;
  std::shared_ptr<Publisher<MebibyteMessage>> publisher;

  /// Both nodes and the topic's two ends, once the sender sends to beta.
  void connect() {
    receiver = node("receiver", "b");
    sender = node("sender", "a");
    ASSERT_TRUE(receiver && sender);
    auto subscribed = receiver->subscribe<MebibyteMessage>("window");
    auto advertised = sender->advertise<MebibyteMessage>("window");
    ASSERT_TRUE(subscribed && advertised);
    subscriber = *subscribed;
    publisher = *advertised;
    ASSERT_TRUE(eventually([&] { return routed(); }, 5s));
  }
  [[nodiscard]] bool routed() const { return routed_to(*sender, "window", "beta"); }
};

TEST_F(UdpReliableWindow, MebibyteMessagesAsFastAsPublishAllowsAreNeverLost) {
  ASSERT_NO_FATAL_FAILURE(connect());

  std::atomic<std::uint64_t> received{0};
  std::atomic<std::uint64_t> out_of_order{0};
  std::atomic<std::uint64_t> corrupt{0};
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    std::uint64_t next = 1;
    while (!stop.load(std::memory_order_relaxed)) {
      bool any = false;
      while (auto sample = subscriber->take()) {
        any = true;
        corrupt += intact(**sample) ? 0 : 1;
        out_of_order += (*sample)->sequence == next ? 0 : 1;
        next = (*sample)->sequence + 1;
        received.fetch_add(1, std::memory_order_relaxed);
      }
      if (!any) {
        std::this_thread::sleep_for(200us);
      }
    }
  });

  // Publish for a bounded time, as fast as loan() and publish() allow.
  std::uint64_t published = 0;
  std::uint64_t timed_out = 0;
  const auto end = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < end) {
    auto loan = publisher->loan();
    if (!loan) {
      ASSERT_TRUE(loan.exhausted()) << loan.error().message();
      continue;  // back-pressure: the window is full of unacknowledged messages
    }
    fill(**loan, published + 1);
    const PublishResult result = publisher->publish(std::move(*loan));
    ASSERT_TRUE(result) << result.error().message();
    timed_out += result->timed_out;
    ++published;
  }
  const bool all = eventually([&] { return received.load() >= published; }, 10s);
  stop = true;
  reader.join();

  const NetworkCounters in = receiver->network_counters();
  const NetworkCounters out = sender->network_counters();
  EXPECT_TRUE(all) << "received " << received.load() << " of " << published;
  EXPECT_GT(published, 4U);
  EXPECT_EQ(in.messages_lost, 0U) << "the receiver skipped messages the writer no longer held";
  EXPECT_EQ(out.gaps_sent, 0U);
  EXPECT_EQ(timed_out, 0U) << "the writer gave up waiting for the receiver";
  EXPECT_EQ(out_of_order.load(), 0U);
  EXPECT_EQ(corrupt.load(), 0U);
  std::cout << "published " << published << " MiB in 3 s, " << out.fragments_resent << " fragments resent, "
            << out.nacks_received << " NACKs\n";
}

// A reader that leaves stops holding the writer: what it had not
// acknowledged is given back, and publishes no longer wait for it.
TEST_F(UdpReliableWindow, AReaderThatLeavesStopsHoldingTheWriter) {
  ASSERT_NO_FATAL_FAILURE(connect());
  auto publish = [&](std::uint64_t sequence) {
    auto loan = publisher->loan();
    ASSERT_TRUE(loan);
    fill(**loan, sequence);
    const PublishResult result = publisher->publish(std::move(*loan));
    ASSERT_TRUE(result) << result.error().message();
    EXPECT_EQ(result->timed_out, 0U) << "message " << sequence;
  };
  for (std::uint64_t i = 1; i <= 4; ++i) {
    publish(i);
  }
  subscriber.reset();  // the subscription goes ...
  receiver.reset();    // ... and its host with it
  ASSERT_TRUE(eventually([&] { return !routed(); }, 5s));
  // Twice the history: each would wait kAckTimeoutNs if the reader still held it.
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t i = 5; i <= 20; ++i) {
    publish(i);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

}  // namespace
}  // namespace axon
