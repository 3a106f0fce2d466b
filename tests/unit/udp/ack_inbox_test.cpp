// The ACK queue between the receive thread and a writer: order, a full
// queue dropping (ACKs are cumulative), and a waiting publisher woken.
#include "transports/udp/ack_inbox.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "src/base/futex.hpp"

namespace axon::udp {
namespace {

std::vector<std::uint64_t> drained(AckInbox& inbox) {
  std::vector<std::uint64_t> out;
  inbox.drain([&](const AckInbox::Entry& e) { out.push_back(e.next_sequence); });
  return out;
}

TEST(AckInbox, DrainsInOrderAndDropsWhenFull) {
  AckInbox inbox;
  EXPECT_TRUE(drained(inbox).empty());
  for (std::uint64_t i = 1; i <= AckInbox::kCapacity + 5; ++i) {
    inbox.push({.participant = 7, .next_sequence = i});
  }
  const std::vector<std::uint64_t> first = drained(inbox);
  ASSERT_EQ(first.size(), AckInbox::kCapacity) << "the ones beyond the capacity are dropped";
  EXPECT_EQ(first.front(), 1U);
  EXPECT_EQ(first.back(), AckInbox::kCapacity);
  inbox.push({.participant = 7, .next_sequence = 100});
  EXPECT_EQ(drained(inbox), (std::vector<std::uint64_t>{100})) << "room again once drained";
}

TEST(AckInbox, APushWakesAWaitingConsumer) {
  AckInbox inbox;
  std::atomic<bool> waiting{false};
  std::uint64_t got = 0;
  std::thread consumer([&] {
    for (int round = 0; round < 1000 && got == 0; ++round) {
      WakeWord* const words[] = {&inbox.word()};
      futex::Waiter waiter(words);
      inbox.drain([&](const AckInbox::Entry& e) { got = e.next_sequence; });
      if (got != 0) {
        break;
      }
      waiting.store(true);
      (void)waiter.wait(1'000'000'000);
    }
  });
  while (!waiting.load()) {
    std::this_thread::yield();
  }
  const auto pushed = std::chrono::steady_clock::now();
  inbox.push({.participant = 1, .next_sequence = 42});
  consumer.join();
  EXPECT_EQ(got, 42U);
  EXPECT_LT(std::chrono::steady_clock::now() - pushed, std::chrono::milliseconds(500))
      << "woken by the push, not by the one-second timeout";
}

}  // namespace
}  // namespace axon::udp
