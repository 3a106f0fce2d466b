// A RELIABLE stream never loses a message while both ends are alive: a writer
// that sends 1 MiB messages as fast as publish() lets it, to a receiver that
// cannot keep up (small socket buffer, short resend history), must hold back
// rather than evict what the receiver has not acknowledged (a GAP would make
// the receiver count the message as lost), and not overrun its socket buffer. Two "hosts" of one process on
// loopback, as in udp_loopback_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "axon/axon.hpp"
#include "axon/domain_view.hpp"
#include "tests/support/child_process.hpp"
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
  // Flow control: the writer keeps what it sends unacknowledged within the
  // receive buffer, so the receiver's socket does not overflow (before: 16 %
  // of the datagrams were resends).
  EXPECT_LT(out.fragments_resent * 20, out.datagrams_sent) << "more than 5 % of the datagrams were resends";
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

// What the reader acknowledged goes back to the pool without another
// publish: the writer trims its resend history at each heartbeat period too,
// so after a publisher's last message its pool reads all free (before, the
// last message's chunk stayed pinned until the next publish; found by
// `axon-bench chaos bench/scenarios/chaos_net_ci.yaml`'s pool check).
TEST_F(UdpReliableWindow, AcknowledgedMessagesGoBackToThePoolWithoutAnotherPublish) {
  ASSERT_NO_FATAL_FAILURE(connect());
  for (std::uint64_t i = 1; i <= 3; ++i) {
    auto loan = publisher->loan();
    ASSERT_TRUE(loan);
    fill(**loan, i);
    ASSERT_TRUE(publisher->publish(std::move(*loan)));
  }
  std::uint64_t taken = 0;
  ASSERT_TRUE(eventually(
      [&] {
        while (subscriber->take()) {  // each sample is released at once
          ++taken;
        }
        return taken >= 3;
      },
      5s));

  const DomainAddress address{.domain_id = hosts.domain(), .shm_dir = hosts.shm_dir("a")};
  std::string held;
  const bool all_free = eventually(
      [&] {
        auto pools = read_pool_views(address, "sender", 200'000'000);
        if (!pools || pools->size() != 1) {
          held = pools ? "no pool of 'sender'" : std::string(pools.error().message());
          return false;
        }
        held.clear();
        for (const PoolClassView& c : pools->front().classes) {
          if (c.free_chunks != c.total_chunks) {
            held += std::to_string(c.free_chunks) + " of " + std::to_string(c.total_chunks) + " free; ";
          }
        }
        return held.empty();
      },
      2s);

  EXPECT_TRUE(all_free) << held;
}

// A reader that stops acknowledging (its process stopped by SIGSTOP, so it
// stays alive for liveliness) holds each publish back at most the window's
// timeout (UdpWriter::kAckTimeoutNs, 100 ms); once the history is full, the
// message goes to this host only and its status counts the reader in
// timed_out and dropped. None is
// lost silently: a publish either keeps the message for the reader (at most
// the history, 8) or says it did not.
TEST_F(UdpReliableWindow, AReaderThatStopsAcknowledgingHoldsEachPublishAtMostTheTimeout) {
  // Forked before this process starts any thread (the nodes come after).
  auto reader = test::ChildProcess::fork_and_run([this] {
    auto receiver = node("receiver", "b");
    if (!receiver) {
      return 1;
    }
    auto subscriber = receiver->subscribe<MebibyteMessage>("window");
    if (!subscriber) {
      return 2;
    }
    std::printf("READY\n");
    std::fflush(stdout);
    for (;;) {
      while ((*subscriber)->take()) {
      }
      std::this_thread::sleep_for(1ms);
    }
  });
  ASSERT_TRUE(reader.wait_for_line("READY", 10s)) << reader.output();
  auto sender = node("sender", "a");
  ASSERT_TRUE(sender);
  auto publisher = sender->advertise<MebibyteMessage>("window");
  ASSERT_TRUE(publisher);
  ASSERT_TRUE(eventually([&] { return routed_to(*sender, "window", "beta"); }, 5s));
  struct Outcome {
    std::chrono::steady_clock::duration took{};
    std::uint32_t timed_out = 0;
    std::uint32_t dropped = 0;
  };
  auto publish = [&](std::uint64_t sequence) {
    const auto start = std::chrono::steady_clock::now();
    auto loan = (*publisher)->loan();
    EXPECT_TRUE(loan) << "message " << sequence << ": the pool is held by the history";
    if (!loan) {
      return Outcome{};
    }
    fill(**loan, sequence);
    const PublishResult result = (*publisher)->publish(std::move(*loan));
    EXPECT_TRUE(result) << result.error().message();
    return Outcome{.took = std::chrono::steady_clock::now() - start,
                   .timed_out = result ? result->timed_out : 0,
                   .dropped = result ? result->dropped : 0};
  };
  EXPECT_EQ(publish(1).timed_out, 0U) << "the reader is alive and acknowledging";
  std::this_thread::sleep_for(100ms);  // its ACK comes back

  ASSERT_TRUE(reader.stop(5s));
  // More than the history, and well within the liveliness timeout (2 s), so
  // the reader stays a destination: each waits 100 ms at most.
  constexpr int kPublishes = 12;
  int timed_out = 0;
  std::chrono::steady_clock::duration longest{};
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kPublishes; ++i) {
    const Outcome outcome = publish(static_cast<std::uint64_t>(i) + 2);
    longest = std::max(longest, outcome.took);
    if (outcome.timed_out > 0) {
      ++timed_out;
      EXPECT_EQ(outcome.timed_out, 1U);
      EXPECT_EQ(outcome.dropped, 1U) << "a timed-out reader did not get the message";
    }
  }
  const auto took = std::chrono::steady_clock::now() - start;
  reader.kill(SIGCONT);

  // At most the history (8) was kept for the stopped reader; every other
  // publish said that it did not reach it.
  EXPECT_GE(timed_out, kPublishes - 8);
  // 100 ms each, with room for a loaded machine; never waiting on.
  EXPECT_LT(longest, 400ms) << "a publish waited far beyond the window's timeout";
  EXPECT_LT(took, std::chrono::milliseconds(200) * kPublishes) << "publishes waited more than the timeout each";
}

}  // namespace
}  // namespace axon
