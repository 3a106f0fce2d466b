// One process, one or more nodes: the API's behaviour without the
// complications of several processes (those are in tests/integration).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/one_node_test.hpp"
#include "tests/support/peer_domain_test.hpp"
#include "tests/support/pose_message.hpp"

namespace axon {
namespace {

using test::Pose;

struct Big {
  std::byte data[300'000];
};

const std::vector<ChunkClassConfig> kPool{{.payload_bytes = 256, .count = 32}, {.payload_bytes = 4096, .count = 8}};

NodeOptions options_for(std::uint32_t domain) { return test::pool_options(domain, kPool); }

using test::total_free;

class NodeTest : public test::OneNodeTest {
 protected:
  NodeTest() : OneNodeTest("node_test", kPool) {}
};

TEST_F(NodeTest, DeliversALoanedMessageWithoutCopying) {
  auto pub = node->advertise<Pose>("pose");
  auto sub = node->subscribe<Pose>("pose");
  ASSERT_TRUE(pub.ok() && sub.ok());
  auto loan = pub->loan();
  ASSERT_TRUE(loan.ok());
  loan->x = 1.5;
  loan->stamp = 7;
  const void* written_at = (*loan).value();
  auto status = pub->publish(std::move(*loan));
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->delivered, 1U);
  auto sample = sub->take();
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(sample->x, 1.5);
  EXPECT_EQ(sample->stamp, 7U);
  EXPECT_EQ((*sample).data(), written_at) << "the subscriber reads the publisher's memory";
  EXPECT_EQ((*sample).info().sequence, 1U);
  EXPECT_GT((*sample).info().publish_time_ns, 0);
}

TEST_F(NodeTest, TakeReportsNoDataAsAnOutcome) {
  auto sub = node->subscribe<Pose>("pose");
  auto sample = sub->take();
  ASSERT_FALSE(sample.ok());
  EXPECT_TRUE(sample.empty());
  EXPECT_FALSE(sample.failed());
}

TEST_F(NodeTest, EverySubscriberGetsEveryMessageFromOneChunk) {
  auto pub = node->advertise<Pose>("pose");
  auto a = node->subscribe<Pose>("pose");
  auto b = node->subscribe<Pose>("pose");
  ASSERT_TRUE(pub->publish(Pose{.x = 3, .y = 4, .stamp = 1}).ok());
  auto from_a = a->take();
  auto from_b = b->take();
  ASSERT_TRUE(from_a.ok() && from_b.ok());
  EXPECT_EQ((*from_a).data(), (*from_b).data());
  EXPECT_EQ(from_b->y, 4);
}

TEST_F(NodeTest, ChunksReturnToThePoolWhenTheLastSampleIsDropped) {
  const std::uint32_t free_at_start = total_free(*node);
  auto pub = node->advertise<Pose>("pose");
  auto a = node->subscribe<Pose>("pose");
  auto b = node->subscribe<Pose>("pose");
  ASSERT_TRUE(pub->publish(Pose{}).ok());
  EXPECT_EQ(total_free(*node), free_at_start - 1);
  {
    auto from_a = a->take();
    EXPECT_EQ(total_free(*node), free_at_start - 1);
    auto from_b = b->take();
  }
  EXPECT_EQ(total_free(*node), free_at_start);
}

TEST_F(NodeTest, ALoanDroppedUnpublishedGoesBackToThePool) {
  const std::uint32_t free_at_start = total_free(*node);
  auto pub = node->advertise<Pose>("pose");
  {
    auto loan = pub->loan();
    ASSERT_TRUE(loan.ok());
    EXPECT_EQ(total_free(*node), free_at_start - 1);
  }
  EXPECT_EQ(total_free(*node), free_at_start);
}

TEST_F(NodeTest, APublisherWithoutSubscribersReturnsTheChunkAtOnce) {
  const std::uint32_t free_at_start = total_free(*node);
  auto pub = node->advertise<Pose>("pose");
  auto status = pub->publish(Pose{});
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->delivered, 0U);
  EXPECT_EQ(total_free(*node), free_at_start);
}

TEST_F(NodeTest, AFullRejectNewestQueueDropsTheNewestAndSaysSo) {
  auto pub = node->advertise<Pose>("pose");
  auto sub = node->subscribe<Pose>("pose", {.depth = 2, .overflow = Overflow::kRejectNewest});
  for (std::uint64_t i = 1; i <= 2; ++i) {
    EXPECT_EQ(pub->publish(Pose{.stamp = i})->delivered, 1U);
  }
  auto status = pub->publish(Pose{.stamp = 3});
  EXPECT_EQ(status->delivered, 0U);
  EXPECT_EQ(status->dropped, 1U);
  EXPECT_EQ(sub->take()->stamp, 1U);
  EXPECT_EQ(sub->take()->stamp, 2U);
  EXPECT_TRUE(sub->take().empty());
  EXPECT_EQ(sub->counters().queue.dropped_full, 1U);
}

TEST_F(NodeTest, AKeepLastQueueDropsItsOldestByDefault) {
  auto pub = node->advertise<Pose>("pose");
  auto sub = node->subscribe<Pose>("pose", {.depth = 2});
  for (std::uint64_t i = 1; i <= 2; ++i) {
    EXPECT_EQ(pub->publish(Pose{.stamp = i})->evicted, 0U);
  }
  auto status = pub->publish(Pose{.stamp = 3});
  EXPECT_EQ(status->delivered, 1U);
  EXPECT_EQ(status->evicted, 1U);
  EXPECT_EQ(sub->take()->stamp, 2U);
  EXPECT_EQ(sub->take()->stamp, 3U);
  EXPECT_TRUE(sub->take().empty());
  EXPECT_EQ(sub->counters().queue.dropped_oldest, 1U);
  EXPECT_EQ(sub->counters().queue.high_water, 2U);
}

TEST_F(NodeTest, ALatestOnlyMailboxAlwaysHoldsTheFreshestMessage) {
  auto pub = node->advertise<Pose>("pose");
  auto sub = node->subscribe<Pose>("pose", {.depth = 8, .overflow = Overflow::kLatestOnly});
  for (std::uint64_t i = 1; i <= 5; ++i) {
    ASSERT_TRUE(pub->publish(Pose{.stamp = i}).ok());
  }
  EXPECT_EQ(sub->take()->stamp, 5U);
  EXPECT_TRUE(sub->take().empty());
  EXPECT_EQ(sub->counters().queue.dropped_oldest, 4U);
}

TEST_F(NodeTest, ContradictoryQueuePoliciesAreRefusedWithTheReason) {
  auto reliable_drop =
      node->subscribe<Pose>("pose", {.reliability = Reliability::kReliable, .overflow = Overflow::kDropOldest});
  ASSERT_FALSE(reliable_drop.ok());
  EXPECT_EQ(reliable_drop.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(reliable_drop.error().message().find("kReliable"), std::string::npos);
  auto keep_all_drop = node->subscribe<Pose>("pose", {.history = History::kKeepAll, .overflow = Overflow::kLatestOnly});
  ASSERT_FALSE(keep_all_drop.ok());
  EXPECT_NE(keep_all_drop.error().message().find("kKeepAll"), std::string::npos);
  auto reliable_quarantine =
      node->subscribe<Pose>("pose", {.reliability = Reliability::kReliable, .quarantine_after_ns = 1'000'000});
  ASSERT_FALSE(reliable_quarantine.ok());
  EXPECT_NE(reliable_quarantine.error().message().find("quarantine_after_ns"), std::string::npos);
}

TEST_F(NodeTest, ABlockingSubscriberHoldsThePublisherBackOnlyUntilItsTimeout) {
  auto pub = node->advertise<Pose>("pose");
  auto sub = node->subscribe<Pose>("pose",
                                   {.depth = 1, .overflow = Overflow::kBlockPublisher, .block_timeout_ns = 20'000'000});
  ASSERT_EQ(pub->publish(Pose{.stamp = 1})->delivered, 1U);
  const auto start = std::chrono::steady_clock::now();
  auto status = pub->publish(Pose{.stamp = 2});
  EXPECT_EQ(status->dropped, 1U);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
}

TEST_F(NodeTest, AReliableSubscriberThatStaysFullIsCountedAsTimedOutInTheStatus) {
  auto pub = node->advertise<Pose>("pose");
  auto reliable =
      node->subscribe<Pose>("pose", {.depth = 1, .reliability = Reliability::kReliable, .block_timeout_ns = 5'000'000});
  auto other = node->subscribe<Pose>("pose", {.depth = 4});
  ASSERT_TRUE(pub->publish(Pose{.stamp = 1}).ok());
  auto second = pub->publish(Pose{.stamp = 2});
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_EQ(second->timed_out, 1U);
  EXPECT_EQ(second->delivered, 1U);
  // The other subscriber got both; the reliable one was never silently skipped.
  EXPECT_EQ(other->take()->stamp, 1U);
  EXPECT_EQ(other->take()->stamp, 2U);
  EXPECT_EQ(reliable->take()->stamp, 1U);
  EXPECT_EQ(reliable->counters().queue.dropped_timeout, 1U);
}

TEST_F(NodeTest, ABlockingSubscriberDoesNotDelayTheOthersCopy) {
  auto pub = node->advertise<Pose>("pose");
  auto blocking = node->subscribe<Pose>(
      "pose", {.depth = 1, .overflow = Overflow::kBlockPublisher, .block_timeout_ns = 10'000'000'000});
  auto other = node->subscribe<Pose>("pose", {.depth = 4});
  ASSERT_TRUE(pub->publish(Pose{.stamp = 1}).ok());
  ASSERT_EQ(other->take()->stamp, 1U);
  std::atomic<bool> seen_by_other{false};
  std::thread reader([&] {
    // The publisher is blocked on the full blocking queue; the other
    // subscriber must already have message 2.
    for (int i = 0; i < 10'000 && !seen_by_other; ++i) {
      if (auto s = other->take()) {
        seen_by_other = s->stamp == 2;
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }
    EXPECT_EQ(blocking->take()->stamp, 1U);  // makes room: the publisher continues
  });
  auto status = pub->publish(Pose{.stamp = 2});
  reader.join();
  EXPECT_TRUE(seen_by_other);
  EXPECT_EQ(status->delivered, 2U);
}

TEST_F(NodeTest, BackpressureIsReportedOncePerCrossingWithFillLevels) {
  auto pub = node->advertise<Pose>("pose", {.high_water_percent = 50});
  auto sub = node->subscribe<Pose>("pose", {.depth = 4, .overflow = Overflow::kRejectNewest});
  std::vector<BackpressureEvent> events;
  pub->on_backpressure([&](const BackpressureEvent& e) { events.push_back(e); });
  EXPECT_EQ(pub->publish(Pose{.stamp = 1})->full, 0U);
  EXPECT_EQ(pub->publish(Pose{.stamp = 2})->full, 1U);
  EXPECT_EQ(pub->publish(Pose{.stamp = 3})->full, 1U);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].queued, 2U);
  EXPECT_EQ(events[0].depth, 4U);
  SubscriberFill fill[4];
  ASSERT_EQ(pub->subscriber_fill(fill), 1U);
  EXPECT_EQ(fill[0].queued, 3U);
  EXPECT_EQ(fill[0].counters.high_water, 3U);
  // Drained below the mark, then crossing again reports again.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(sub->take().ok());
  }
  EXPECT_EQ(pub->publish(Pose{.stamp = 4})->full, 0U);
  EXPECT_EQ(pub->publish(Pose{.stamp = 5})->full, 1U);
  EXPECT_EQ(events.size(), 2U);
  EXPECT_EQ(pub->counters().published, 5U);
}

TEST_F(NodeTest, ATransientLocalPublisherHandsItsLastMessagesToALateJoiner) {
  auto pub = node->advertise<Pose>("pose", {.durability = Durability::kTransientLocal, .durability_depth = 3});
  for (std::uint64_t i = 1; i <= 5; ++i) {
    ASSERT_TRUE(pub->publish(Pose{.stamp = i}).ok());
  }
  auto late = node->subscribe<Pose>("pose", {.depth = 8});
  // The publisher is idle: the node's service thread hands the history over.
  std::vector<std::uint64_t> got;
  for (int i = 0; i < 2'000 && got.size() < 3; ++i) {
    if (auto s = late->take()) {
      got.push_back(s->stamp);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  EXPECT_EQ(got, (std::vector<std::uint64_t>{3, 4, 5}));
  ASSERT_TRUE(pub->publish(Pose{.stamp = 6}).ok());
  EXPECT_EQ(late->take()->stamp, 6U);
  EXPECT_TRUE(late->take().empty());
}

TEST_F(NodeTest, ABadDurabilityDepthIsRefused) {
  auto pub = node->advertise<Pose>("pose", {.durability = Durability::kTransientLocal, .durability_depth = 17});
  ASSERT_FALSE(pub.ok());
  EXPECT_NE(pub.error().message().find("durability_depth"), std::string::npos);
}

TEST_F(NodeTest, ABlockedPublisherContinuesAsSoonAsTheSubscriberTakes) {
  auto pub = node->advertise<Pose>("pose");
  auto sub = node->subscribe<Pose>(
      "pose", {.depth = 1, .overflow = Overflow::kBlockPublisher, .block_timeout_ns = 10'000'000'000});
  ASSERT_EQ(pub->publish(Pose{.stamp = 1})->delivered, 1U);
  std::thread reader([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (std::uint64_t expected = 1; expected <= 2;) {
      if (auto s = sub->take()) {
        EXPECT_EQ(s->stamp, expected++);
      } else {
        std::this_thread::yield();
      }
    }
  });
  auto status = pub->publish(Pose{.stamp = 2});
  reader.join();
  EXPECT_EQ(status->delivered, 1U);
}

TEST_F(NodeTest, RefusesASubscriberOfAnotherTypeNamingBothTypes) {
  auto pub = node->advertise<Pose>("pose");
  auto sub = node->subscribe<std::uint64_t>("pose");
  test::expect_error_naming(sub, ErrorCode::kTypeMismatch, {"Pose", "long"});
}

TEST_F(NodeTest, RefusesATopicLargerThanTheLargestChunkClass) {
  auto pub = node->advertise<Big>("big");
  ASSERT_FALSE(pub.ok());
  EXPECT_EQ(pub.error().code(), ErrorCode::kPayloadTooLarge);
  EXPECT_NE(pub.error().message().find("300000"), std::string_view::npos) << pub.error().message();
}

TEST_F(NodeTest, ReportsPoolExhaustionWhenSubscribersHoldEveryChunk) {
  auto pub = node->advertise<Pose>("pose");
  auto sub = node->subscribe<Pose>("pose", {.depth = 64, .max_held_samples = 64});
  std::vector<Sample<Pose>> held;
  // 32 small + 8 larger chunks can all carry a Pose.
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(pub->publish(Pose{}).ok());
    held.push_back(std::move(*sub->take()));
  }
  auto loan = pub->loan();
  ASSERT_FALSE(loan.ok());
  EXPECT_TRUE(loan.exhausted());
  held.pop_back();
  EXPECT_TRUE(pub->loan().ok());
}

TEST_F(NodeTest, LimitsHowManySamplesASubscriberHolds) {
  auto pub = node->advertise<Pose>("pose");
  auto sub = node->subscribe<Pose>("pose", {.depth = 8, .max_held_samples = 2});
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(pub->publish(Pose{}).ok());
  }
  auto first = sub->take();
  auto second = sub->take();
  auto third = sub->take();
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().code(), ErrorCode::kTooManySamples);
}

TEST_F(NodeTest, RejectsADepthOutsideOneToTheRingCapacity) {
  EXPECT_EQ(node->subscribe<Pose>("pose", {.depth = 0}).error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(node->subscribe<Pose>("pose", {.depth = 100'000}).error().code(), ErrorCode::kInvalidArgument);
}

TEST_F(NodeTest, SamplesOutliveTheirSubscriberAndNode) {
  auto pub = node->advertise<Pose>("pose");
  auto sub = node->subscribe<Pose>("pose");
  ASSERT_TRUE(pub->publish(Pose{.x = 42}).ok());
  auto sample = sub->take();
  ASSERT_TRUE(sample.ok());
  Sample<Pose> kept = std::move(*sample);
  sub = Result<std::shared_ptr<Subscriber<Pose>>>(Error(ErrorCode::kClosed, "dropped"));
  EXPECT_EQ(kept->x, 42);
}

TEST_F(NodeTest, ASubscriberJoiningLateGetsOnlyNewMessages) {
  auto pub = node->advertise<Pose>("pose");
  ASSERT_TRUE(pub->publish(Pose{.stamp = 1}).ok());
  auto sub = node->subscribe<Pose>("pose");
  ASSERT_TRUE(pub->publish(Pose{.stamp = 2}).ok());
  EXPECT_EQ(sub->take()->stamp, 2U);
  EXPECT_TRUE(sub->take().empty());
}

TEST_F(NodeTest, APublisherAppearingLaterReachesExistingSubscribersAtOnce) {
  auto sub = node->subscribe<Pose>("pose");
  auto pub = node->advertise<Pose>("pose");
  EXPECT_EQ(pub->subscriber_count(), 1U);
  EXPECT_EQ(pub->publish(Pose{.stamp = 5})->delivered, 1U);
  EXPECT_EQ(sub->take()->stamp, 5U);
}

TEST_F(NodeTest, ASubscriberThatLeavesGivesBackWhatWasQueuedForIt) {
  const std::uint32_t free_at_start = total_free(*node);
  auto pub = node->advertise<Pose>("pose");
  {
    auto sub = node->subscribe<Pose>("pose", {.depth = 16});
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(pub->publish(Pose{}).ok());
    }
    EXPECT_EQ(total_free(*node), free_at_start - 10);
  }
  // The publisher reclaims the closed connection on its next publish.
  ASSERT_TRUE(pub->publish(Pose{}).ok());
  EXPECT_EQ(total_free(*node), free_at_start);
  EXPECT_EQ(pub->subscriber_count(), 0U);
}

TEST_F(NodeTest, SeveralNodesInOneProcessTalkThroughSharedMemory) {
  auto other = Node::create("second", options_for(domain));
  ASSERT_TRUE(other.ok());
  auto pub = node->advertise<Pose>("pose");
  auto sub = other->subscribe<Pose>("pose");
  ASSERT_TRUE(pub->publish(Pose{.y = 8}).ok());
  EXPECT_EQ(sub->take()->y, 8);
}

TEST(NodeCreate, RejectsABadNodeName) {
  EXPECT_EQ(Node::create("").error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Node::create("a/b").error().code(), ErrorCode::kInvalidArgument);
}

TEST(NodeCreate, RejectsAnIncompatibleRegistryWithAClearMessage) {
  const std::uint32_t domain = test::unique_domain();
  const std::string path = "/dev/shm/axon_d" + std::to_string(domain) + "_registry";
  {
    std::ofstream garbage(path);
    garbage << std::string(4096, 'x');
  }
  auto node = Node::create("victim", options_for(domain));
  ::unlink(path.c_str());
  ::unlink(("/dev/shm/axon_d" + std::to_string(domain) + ".lock").c_str());
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.error().code(), ErrorCode::kIncompatible);
  EXPECT_NE(node.error().message().find(path), std::string_view::npos) << node.error().message();
}

TEST(NodeCreate, ReportsAFullShmDirectoryWithSizesAndTheFix) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root to mount a tiny tmpfs";
  }
  char dir_template[] = "/tmp/axon_tiny_shm_XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") != 0) {
    ::rmdir(dir.c_str());
    GTEST_SKIP() << "cannot mount tmpfs here: " << std::strerror(errno);
  }
  NodeOptions options = options_for(test::unique_domain());
  options.shm_dir = dir;
  auto node = Node::create("cramped", options);
  ::umount(dir.c_str());
  ::rmdir(dir.c_str());
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.error().code(), ErrorCode::kNoSpace);
  const std::string message(node.error().message());
  EXPECT_NE(message.find("MiB free"), std::string::npos) << message;
  EXPECT_NE(message.find("needs"), std::string::npos) << message;
  EXPECT_NE(message.find("--shm-size"), std::string::npos) << message;
}

TEST(NodeCreate, RejectsAnOversizedPoolWithAClearMessage) {
  NodeOptions options;
  options.domain_id = test::unique_domain();
  options.chunk_classes = {{.payload_bytes = 1U << 30, .count = 4000}};
  auto node = Node::create("greedy", options);
  ASSERT_FALSE(node.ok());
  EXPECT_TRUE(test::domain_files(*options.domain_id).empty());
}

TEST(NodeCreate, CreatesItsFilesWithMode0600) {
  const std::uint32_t domain = test::unique_domain();
  auto node = Node::create("private", options_for(domain));
  ASSERT_TRUE(node.ok());
  for (const auto& name : test::domain_files(domain)) {
    const auto perms = std::filesystem::status("/dev/shm/" + name).permissions();
    EXPECT_EQ(perms & (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
              std::filesystem::perms::none)
        << name;
  }
}

}  // namespace
}  // namespace axon
