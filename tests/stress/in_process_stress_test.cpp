// The same storm with threads in one process, so ThreadSanitizer sees every
// access of the pool and the rings.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/test_messages.hpp"

namespace axon {
namespace {

using test::TestMessage;

std::uint64_t total_messages() {
  const char* text = std::getenv("AXON_STRESS_MESSAGES");  // NOLINT(concurrency-mt-unsafe): before any thread
  return text != nullptr ? std::strtoull(text, nullptr, 10) : 200'000;
}

TEST(Stress, FourPublisherThreadsToFourSubscriberThreadsLoseNothing) {
  constexpr int kPublishers = 4;
  constexpr int kSubscribers = 4;
  const std::uint64_t per_publisher = total_messages() / kPublishers;
  const std::uint32_t domain = test::unique_domain();
  NodeOptions options;
  options.domain_id = domain;
  // Two nodes: publishers live in one, subscribers in the other, as with processes.
  auto pub_node = Node::create("stress-pub", options);
  auto sub_node = Node::create("stress-sub", options);
  ASSERT_TRUE(pub_node.ok() && sub_node.ok());

  std::vector<std::shared_ptr<Subscriber<TestMessage>>> subs;
  for (int s = 0; s < kSubscribers; ++s) {
    auto sub = sub_node->subscribe<TestMessage>(
        "storm", {.depth = 256, .overflow = Overflow::kBlockPublisher, .block_timeout_ns = 600'000'000'000});
    ASSERT_TRUE(sub.ok());
    subs.push_back(*sub);
  }
  std::vector<std::shared_ptr<Publisher<TestMessage>>> pubs;
  for (int p = 0; p < kPublishers; ++p) {
    auto pub = pub_node->advertise<TestMessage>("storm");
    ASSERT_TRUE(pub.ok());
    pubs.push_back(*pub);
  }

  std::atomic<std::uint64_t> errors{0};
  std::vector<std::uint64_t> received(kSubscribers, 0);
  std::vector<std::thread> threads;
  threads.reserve(kPublishers + kSubscribers);
  for (int s = 0; s < kSubscribers; ++s) {
    threads.emplace_back([&, s] {
      std::map<std::uint32_t, std::uint64_t> last;
      const std::uint64_t expect = per_publisher * kPublishers;
      while (received[s] < expect) {
        auto sample = subs[s]->take();
        if (!sample) {
          std::this_thread::yield();
          continue;
        }
        if (!test::intact(**sample) || sample->sequence != last[sample->publisher] + 1) {
          errors.fetch_add(1);
        }
        last[sample->publisher] = sample->sequence;
        ++received[s];
      }
    });
  }
  for (int p = 0; p < kPublishers; ++p) {
    threads.emplace_back([&, p] {
      for (std::uint64_t seq = 1; seq <= per_publisher;) {
        auto loan = pubs[p]->loan();
        if (!loan) {
          std::this_thread::yield();  // every chunk queued: wait for the readers
          continue;
        }
        test::fill(**loan, static_cast<std::uint32_t>(p + 1), seq);
        auto status = pubs[p]->publish(std::move(*loan));
        if (!status || status->dropped != 0 || status->delivered != kSubscribers) {
          errors.fetch_add(1);
        }
        ++seq;
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(errors.load(), 0U);
  for (int s = 0; s < kSubscribers; ++s) {
    EXPECT_EQ(received[s], per_publisher * kPublishers);
  }
  std::uint32_t free = 0;
  std::uint32_t total = 0;
  for (const auto& c : pub_node->pool_stats()) {
    free += c.free_chunks;
    total += c.total_chunks;
  }
  EXPECT_EQ(free, total) << "every chunk is back in the pool";
}

}  // namespace
}  // namespace axon
