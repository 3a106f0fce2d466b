// The UDP transport between two "hosts" of one process on loopback
// (127.0.0.1 and 127.0.0.2, static peers, separate shared-memory dirs): no
// root needed. Namespaced multi-host tests with real processes, loss and
// killed hosts are in tests/integration/multihost_test.cpp.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <string>

#include "axon/axon.hpp"
#include "src/base/words_and_fd_wait.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/patterned_message.hpp"
#include "tests/support/test_messages.hpp"
#include "tests/support/two_host_loopback.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::routed_to;
using test::TestMessage;

/// Exactly 4 MiB, filled with a pattern of its sequence (test::fill(), test::intact()).
struct BigMessage : test::PatternedMessage<4U << 20U, 4096, 31> {
  static constexpr std::string_view kAxonTypeName = "axon_test::BigMessage";
};
static_assert(sizeof(BigMessage) == BigMessage::kBytes);

/// What a failed delivery needs to be explained: the counters of loss.
std::string counters_text(const NetworkCounters& c) {
  return "datagrams sent " + std::to_string(c.datagrams_sent) + " received " + std::to_string(c.datagrams_received) +
         " refused " + std::to_string(c.datagrams_refused) + ", messages sent " + std::to_string(c.messages_sent) +
         " received " + std::to_string(c.messages_received) + " incomplete " + std::to_string(c.messages_incomplete) +
         " out of order " + std::to_string(c.messages_out_of_order) + ", pool exhausted " +
         std::to_string(c.pool_exhausted) + ", hosts discovered " + std::to_string(c.hosts_discovered);
}

/// Two hosts' nodes in this process, each with its own /dev/shm directory.
class UdpLoopback : public ::testing::Test {
 protected:
  std::shared_ptr<Node> node(const std::string& name, const std::string& shm) const { return hosts.node(name, shm); }

  test::TwoHostLoopback hosts{"axon_udp_loopback",
                              {.topics = R"(  - {name: big, reliability: reliable, depth: 8}
  - {name: steady, reliability: reliable, depth: 256}
  - {name: steady_long, reliability: reliable, depth: 256}
  - {name: local_only, transport: shm}
)",
                               .liveliness_timeout_ms = 1000,  // a loaded TSan run can miss 300 ms of heartbeats
                               .history_depth = 512}};
  const std::filesystem::path config = hosts.config();
  const std::uint16_t port = hosts.port();
};

TEST_F(UdpLoopback, SmallMessagesReachTheOtherHostInOrder) {
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  EXPECT_EQ(sender->transport_for("small"), TransportKind::kUdp);
  auto subscriber = receiver->subscribe<TestMessage>("small", {.depth = 256});
  auto publisher = sender->advertise<TestMessage>("small");
  ASSERT_TRUE(subscriber && publisher);
  ASSERT_TRUE(eventually([&] { return routed_to(*sender, "small", "beta"); }, 5s)) << "beta never announced itself";
  // BEST_EFFORT data from a sender the receiver has not heard announce yet is
  // refused (and counted): wait until discovery went both ways.
  ASSERT_TRUE(eventually([&] { return receiver->network_counters().hosts_discovered == 1; }, 5s))
      << "beta never heard alpha";

  constexpr std::uint64_t kCount = 200;
  for (std::uint64_t i = 1; i <= kCount; ++i) {
    auto loan = (*publisher)->loan();
    ASSERT_TRUE(loan);
    test::fill(**loan, 1, i);
    ASSERT_TRUE((*publisher)->publish(std::move(*loan)));
  }
  std::uint64_t next = 1;
  ASSERT_TRUE(eventually(
      [&] {
        while (auto sample = (*subscriber)->take()) {
          EXPECT_TRUE(test::intact(**sample));
          EXPECT_EQ((*sample)->sequence, next);
          ++next;
        }
        return next > kCount;
      },
      5s))
      << "received " << next - 1 << " of " << kCount << "; sender " << counters_text(sender->network_counters())
      << "; receiver " << counters_text(receiver->network_counters());
  EXPECT_GE(sender->network_counters().messages_sent, kCount);
  EXPECT_GE(receiver->network_counters().messages_received, kCount);
  EXPECT_EQ(receiver->network_counters().hosts_discovered, 1U);
}

TEST_F(UdpLoopback, FourMebibyteReliableMessagesArriveWholeAndInOrder) {
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  auto subscriber = receiver->subscribe<BigMessage>("big");  // reliable by the config
  auto publisher = sender->advertise<BigMessage>("big");
  ASSERT_TRUE(subscriber && publisher);
  ASSERT_TRUE(eventually([&] { return routed_to(*sender, "big", "beta"); }, 5s));
  constexpr std::uint64_t kCount = 6;
  std::uint64_t next = 1;
  auto drain = [&] {
    while (auto sample = (*subscriber)->take()) {
      EXPECT_TRUE(intact(**sample)) << "message " << (*sample)->sequence << " is corrupt";
      EXPECT_EQ((*sample)->sequence, next);
      ++next;
    }
  };
  for (std::uint64_t i = 1; i <= kCount; ++i) {
    LoanResult<Loan<BigMessage>> loan = kPoolExhausted;
    // 4 MiB chunks are few (4 by default): wait for the receiver to let go.
    ASSERT_TRUE(eventually(
        [&] {
          drain();
          loan = (*publisher)->loan();
          return static_cast<bool>(loan);
        },
        5s));
    fill(**loan, i);
    ASSERT_TRUE((*publisher)->publish(std::move(*loan)));
  }
  ASSERT_TRUE(eventually(
      [&] {
        drain();
        return next > kCount;
      },
      10s))
      << "received " << next - 1 << " of " << kCount << "; sender " << counters_text(sender->network_counters())
      << "; receiver " << counters_text(receiver->network_counters());
  const NetworkCounters counters = receiver->network_counters();
  EXPECT_EQ(counters.messages_lost, 0U);
  EXPECT_EQ(counters.datagrams_refused, 0U);
}

// The receive path's common case is copy-free: the fragments of a message
// that is arriving are read from the socket straight into its chunk.
TEST_F(UdpLoopback, FourMebibyteMessagesAreReadStraightIntoTheirChunks) {
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  auto subscriber = receiver->subscribe<BigMessage>("big");
  auto publisher = sender->advertise<BigMessage>("big");
  ASSERT_TRUE(subscriber && publisher);
  ASSERT_TRUE(eventually([&] { return routed_to(*sender, "big", "beta"); }, 5s));
  constexpr std::uint64_t kCount = 3;
  std::uint64_t received = 0;
  for (std::uint64_t i = 1; i <= kCount; ++i) {
    auto loan = (*publisher)->loan();
    ASSERT_TRUE(loan);
    fill(**loan, i);
    ASSERT_TRUE((*publisher)->publish(std::move(*loan)));
    ASSERT_TRUE(eventually(
        [&] {
          while (auto sample = (*subscriber)->take()) {
            EXPECT_TRUE(intact(**sample)) << "message " << (*sample)->sequence << " is corrupt";
            EXPECT_EQ((*sample)->sequence, i);
            ++received;
          }
          return received == i;
        },
        10s))
        << "message " << i << " did not arrive";
  }

  // 1500-byte MTU: 1408 payload bytes per fragment.
  constexpr std::uint64_t kSent = kCount * ((BigMessage::kBytes + 1407) / 1408);
  const NetworkCounters counters = receiver->network_counters();
  const double in_place = static_cast<double>(counters.fragments_in_place) / static_cast<double>(kSent);
  std::cout << "fragments: " << counters.fragments_in_place << " in place, " << counters.fragments_copied << " copied, "
            << counters.fragments_stale << " stale, of " << kSent << " sent (" << 100.0 * in_place << " % in place)\n";
  EXPECT_GE(counters.fragments_in_place + counters.fragments_copied, kSent);
  EXPECT_GE(in_place, 0.9);
  EXPECT_EQ(counters.datagrams_refused, 0U);
}

/// Publishes `count` messages on "steady" from sender to receiver at 5 kHz
/// (the resend history, 64, covers a NACK's round trip) and expects all of
/// them, intact and in order, within 10 s.
void expect_steady_stream_in_order(Node& sender, Node& receiver, std::uint64_t count) {
  auto subscriber = receiver.subscribe<TestMessage>("steady");
  auto publisher = sender.advertise<TestMessage>("steady");
  ASSERT_TRUE(subscriber && publisher);
  ASSERT_TRUE(eventually([&] { return routed_to(sender, "steady", "beta"); }, 5s));
  std::uint64_t next = 1;
  auto drain = [&] {
    while (auto sample = (*subscriber)->take()) {
      EXPECT_TRUE(test::intact(**sample));
      EXPECT_EQ((*sample)->sequence, next);
      next = (*sample)->sequence + 1;
    }
  };
  for (std::uint64_t i = 1; i <= count; ++i) {
    TestMessage message;
    test::fill(message, 1, i);
    ASSERT_TRUE((*publisher)->publish(message));
    std::this_thread::sleep_for(200us);
    drain();
  }
  ASSERT_TRUE(eventually(
      [&] {
        drain();
        return next > count;
      },
      10s))
      << "received up to " << next - 1 << " of " << count;
  EXPECT_EQ(receiver.network_counters().messages_lost, 0U);
}

// Without loss on loopback this checks the reliable path end to end; run in a
// network namespace with random drops (the multihost tests do) it checks NACKs.
TEST_F(UdpLoopback, ReliableSmallMessagesArriveInOrder) {
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  expect_steady_stream_in_order(*sender, *receiver, 500);
}

double process_cpu_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

TEST_F(UdpLoopback, AReceiveThreadThatPollsDeliversInOrderAndSleepsWhenTrafficStops) {
  std::ofstream(config, std::ios::app) << "  receive_poll_us: 500\n";  // appended to the udp: section
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  expect_steady_stream_in_order(*sender, *receiver, 300);  // 200 us apart: within the poll window
  if (HasFatalFailure()) {
    return;
  }

  // Idle: only heartbeats (every 20 ms, each followed by 0.5 ms of polling,
  // so about 5 % of a core for both nodes). A thread that kept polling
  // would take a core's share for the whole second.
  std::this_thread::sleep_for(100ms);
  const double before = process_cpu_ms();
  std::this_thread::sleep_for(1s);
  const double used = process_cpu_ms() - before;
  EXPECT_LT(used, 400.0) << "the process used " << used
                         << " ms of CPU in an idle second: a UDP thread kept polling after the traffic stopped";
}

/// Several fragments per message: a waiter reads those after its wake-up
/// (one-datagram messages it reads in the wait itself).
struct ThreeFragmentMessage {
  static constexpr std::string_view kAxonTypeName = "axon_test::ThreeFragmentMessage";
  std::uint64_t sequence = 0;
  std::uint8_t body[3000] = {};
};

void fill(ThreeFragmentMessage& m, std::uint64_t sequence) {
  m.sequence = sequence;
  for (std::size_t i = 0; i < sizeof(m.body); ++i) {
    m.body[i] = static_cast<std::uint8_t>(sequence + i);
  }
}

bool intact(const ThreeFragmentMessage& m) {
  for (std::size_t i = 0; i < sizeof(m.body); ++i) {
    if (m.body[i] != static_cast<std::uint8_t>(m.sequence + i)) {
      return false;
    }
  }
  return true;
}

void fill(TestMessage& m, std::uint64_t sequence) { test::fill(m, 1, sequence); }  // test::intact() fits as is

/// A WaitSet on the receiving node: 200 messages arrive in order and intact,
/// most of them read from the socket by the waiting thread itself.
template <class Message>
void expect_waiter_reads_the_socket(Node& sender, Node& receiver, const std::string& topic) {
  SCOPED_TRACE("topic " + topic);
  auto subscriber = receiver.subscribe<Message>(topic);
  auto publisher = sender.advertise<Message>(topic);
  ASSERT_TRUE(subscriber && publisher);
  ASSERT_TRUE(eventually([&] { return routed_to(sender, topic, "beta"); }, 5s));
  WaitSet waits(WaitStrategy::blocking());
  ASSERT_TRUE(waits.attach(*subscriber));
  const std::uint64_t read_by_waiters_before = receiver.network_counters().receives_on_waiting_threads;
  constexpr std::uint64_t kCount = 200;
  std::thread publishing([&] {
    for (std::uint64_t i = 1; i <= kCount; ++i) {
      auto message = std::make_unique<Message>();
      fill(*message, i);
      EXPECT_TRUE((*publisher)->publish(*message));
      std::this_thread::sleep_for(500us);  // the waiter is asleep when most arrive
    }
  });
  std::uint64_t next = 1;
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (next <= kCount && std::chrono::steady_clock::now() < give_up) {
    ASSERT_TRUE(waits.wait(100ms));
    while (auto sample = (*subscriber)->take()) {
      EXPECT_TRUE(intact(**sample));
      EXPECT_EQ((*sample)->sequence, next);
      next = (*sample)->sequence + 1;
    }
  }
  publishing.join();
  EXPECT_GT(next, kCount) << "received up to " << next - 1;
  EXPECT_GT(receiver.network_counters().receives_on_waiting_threads - read_by_waiters_before, kCount / 2)
      << "the waiting thread should have read most messages from the socket itself";
}

TEST_F(UdpLoopback, AWaitingThreadOfTheReceivingNodeReadsTheSocketItself) {
  if (!futex::WordsAndFdWait::supported()) {
    GTEST_SKIP() << "io_uring cannot wait on futex words here (Linux 6.7+): waiters are woken by the UDP thread";
  }
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  expect_waiter_reads_the_socket<TestMessage>(*sender, *receiver, "steady");  // one datagram each
  expect_waiter_reads_the_socket<ThreeFragmentMessage>(*sender, *receiver, "steady_long");
}

TEST_F(UdpLoopback, AnExecutorOfTheReceivingNodeReadsTheSocketItself) {
  if (!futex::WordsAndFdWait::supported()) {
    GTEST_SKIP() << "io_uring cannot wait on futex words here (Linux 6.7+): waiters are woken by the UDP thread";
  }
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  SingleThreadedExecutor executor(ExecutorOptions{.wait_strategy = WaitStrategy::blocking()});
  constexpr std::uint64_t kCount = 200;
  std::uint64_t next = 1;
  auto subscription = receiver->subscribe<TestMessage>("steady", [&](const Sample<TestMessage>& sample) {
    EXPECT_EQ(sample->sequence, next);
    next = sample->sequence + 1;
    if (next > kCount) {
      executor.stop();
    }
  });
  auto publisher = sender->advertise<TestMessage>("steady");
  ASSERT_TRUE(subscription && publisher);
  ASSERT_TRUE(executor.add(*subscription));
  ASSERT_TRUE(eventually([&] { return routed_to(*sender, "steady", "beta"); }, 5s));
  const std::uint64_t read_by_waiters_before = receiver->network_counters().receives_on_waiting_threads;
  std::thread publishing([&] {
    for (std::uint64_t i = 1; i <= kCount; ++i) {
      TestMessage message;
      fill(message, i);
      EXPECT_TRUE((*publisher)->publish(message));
      std::this_thread::sleep_for(500us);  // the executor is asleep when most arrive
    }
  });
  ASSERT_TRUE(executor.spin_for(20s));
  publishing.join();
  EXPECT_GT(next, kCount) << "received up to " << next - 1;
  EXPECT_GT(receiver->network_counters().receives_on_waiting_threads - read_by_waiters_before, kCount / 2)
      << "the executor's thread should have read most messages from the socket itself";
}

TEST_F(UdpLoopback, TheUdpThreadTakesTheSocketBackWhenNoThreadWaits) {
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  auto subscriber = receiver->subscribe<TestMessage>("steady");
  auto publisher = sender->advertise<TestMessage>("steady");
  ASSERT_TRUE(subscriber && publisher);
  ASSERT_TRUE(eventually([&] { return routed_to(*sender, "steady", "beta"); }, 5s));
  {
    WaitSet waits(WaitStrategy::blocking());
    ASSERT_TRUE(waits.attach(*subscriber));
    (void)waits.wait(20ms);  // a waiter held the socket, then left
  }
  const std::uint64_t by_waiters = receiver->network_counters().receives_on_waiting_threads;
  for (std::uint64_t i = 1; i <= 50; ++i) {
    TestMessage message;
    test::fill(message, 1, i);
    ASSERT_TRUE((*publisher)->publish(message));
  }
  std::uint64_t received = 0;
  ASSERT_TRUE(eventually(
      [&] {
        while (auto sample = (*subscriber)->take()) {
          ++received;
        }
        return received == 50;
      },
      5s))
      << "received " << received << " of 50 with nobody waiting";
  EXPECT_EQ(receiver->network_counters().receives_on_waiting_threads, by_waiters);
}

TEST_F(UdpLoopback, ShmOnlyTopicsStayOnTheirHost) {
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  EXPECT_EQ(sender->transport_for("local_only"), TransportKind::kShm);
  auto subscriber = receiver->subscribe<TestMessage>("local_only");
  auto publisher = sender->advertise<TestMessage>("local_only");
  ASSERT_TRUE(subscriber && publisher);
  std::this_thread::sleep_for(100ms);  // five announcement periods
  EXPECT_EQ(sender->routes("local_only").size(), 1U);
  TestMessage message;
  test::fill(message, 1, 1);
  ASSERT_TRUE((*publisher)->publish(message));
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE((*subscriber)->take());
  EXPECT_EQ(sender->network_counters().messages_sent, 0U);
}

TEST_F(UdpLoopback, AnotherTypeOnTheOtherHostIsRefusedAndCounted) {
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  auto subscriber = receiver->subscribe<test::OtherMessage>("mixed");
  auto publisher = sender->advertise<TestMessage>("mixed");
  ASSERT_TRUE(subscriber && publisher);
  ASSERT_TRUE(eventually([&] { return sender->network_counters().type_mismatches > 0; }, 5s));
  TestMessage message;
  test::fill(message, 1, 1);
  ASSERT_TRUE((*publisher)->publish(message));
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE((*subscriber)->take());
  EXPECT_EQ(receiver->network_counters().messages_received, 0U);
}

TEST_F(UdpLoopback, GarbageDatagramsAreCountedAndIgnored) {
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  auto subscriber = receiver->subscribe<TestMessage>("small", {.depth = 64});
  auto publisher = sender->advertise<TestMessage>("small");
  ASSERT_TRUE(subscriber && publisher);
  ASSERT_TRUE(eventually([&] { return routed_to(*sender, "small", "beta"); }, 5s));

  // Random bytes, an axon magic with nothing after it, a truncated header:
  // at beta's discovery port, which its node owns.
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(0x7F000002U);
  std::mt19937 random(7);
  constexpr int kGarbage = 50;
  for (int i = 0; i < kGarbage; ++i) {
    std::array<std::uint8_t, 300> bytes{};
    for (auto& b : bytes) {
      b = static_cast<std::uint8_t>(random());
    }
    const std::size_t size = i % 3 == 0 ? 4 : (i % 3 == 1 ? 23 : bytes.size());
    if (i % 3 == 1) {
      std::memcpy(bytes.data(), "AXNU", 4);
    }
    ASSERT_EQ(::sendto(fd, bytes.data(), size, 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to)),
              static_cast<ssize_t>(size));
  }
  ::close(fd);
  ASSERT_TRUE(eventually([&] { return receiver->network_counters().datagrams_refused >= kGarbage; }, 5s))
      << receiver->network_counters().datagrams_refused;
  TestMessage message;
  test::fill(message, 1, 1);
  ASSERT_TRUE((*publisher)->publish(message));
  ASSERT_TRUE(eventually([&] { return static_cast<bool>((*subscriber)->take()); }, 5s))
      << "traffic stopped after the garbage";
}

TEST_F(UdpLoopback, APublisherThatLeavesIsLostForRemoteSubscribers) {
  auto receiver = node("receiver", "b");
  auto subscriber = receiver->subscribe<TestMessage>("small");
  ASSERT_TRUE(subscriber);
  {
    auto sender = node("sender", "a");
    auto publisher = sender->advertise<TestMessage>("small");
    ASSERT_TRUE(publisher);
    ASSERT_TRUE(eventually([&] { return routed_to(*sender, "small", "beta"); }, 5s));
    TestMessage message;
    test::fill(message, 1, 1);
    ASSERT_TRUE((*publisher)->publish(message));
    ASSERT_TRUE(eventually([&] { return (*subscriber)->publisher_count() == 1; }, 5s));
  }
  // Heartbeats stop; after liveliness_timeout_ms the mirror goes, which the
  // subscriber notices like any publisher leaving (take() rescans).
  ASSERT_TRUE(eventually(
      [&] {
        while ((*subscriber)->take()) {
        }
        return (*subscriber)->publishers_lost() == 1;
      },
      5s));
  EXPECT_EQ(receiver->network_counters().hosts_lost, 1U);
}

}  // namespace
}  // namespace axon
