// Chunks a publisher reserves (PublisherQos::reserved_chunks, issue 15):
// other topics of the node never take them, a loan beyond them falls back
// to the shared classes or is refused as the publisher asked, they come back
// when subscribers let go, and pool_stats() and explain_exhausted() say which
// topic holds what.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"

namespace axon {
namespace {

struct Tiny {
  std::uint32_t value = 0;
};

class ChunkReservationTest : public ::testing::Test {
 protected:
  void TearDown() override {
    node.reset();
    EXPECT_TRUE(test::domain_files(domain).empty()) << "files left in /dev/shm";
  }
  void make_node(std::uint32_t chunks) {
    auto created = Node::create("reservation_test", {.domain_id = domain,
                                                     .chunk_classes = {{.payload_bytes = 256, .count = chunks}},
                                                     .chunk_fallback = ChunkFallback{.max_classes = 0}});
    ASSERT_TRUE(created.ok()) << created.error().message();
    node = *created;
  }
  static std::vector<Loan<Tiny>> loan_all(Publisher<Tiny>& pub) {
    std::vector<Loan<Tiny>> held;
    for (auto loan = pub.loan(); loan.ok(); loan = pub.loan()) {
      held.push_back(std::move(*loan));
    }
    return held;
  }
  static const PoolTopicShare* share_of(const PoolClassStats& stats, const std::string& topic) {
    for (const auto& share : stats.topics) {
      if (share.topic == topic) {
        return &share;
      }
    }
    return nullptr;
  }
  std::uint32_t domain = test::unique_domain();
  std::shared_ptr<Node> node;
};

TEST_F(ChunkReservationTest, OtherTopicsNeverTakeReservedChunksAndTheStatsSayWhoHoldsWhat) {
  make_node(8);
  auto commands = node->advertise<Tiny>("cmd_vel", {.reserved_chunks = 3});
  auto diagnostics = node->advertise<Tiny>("diagnostics");
  ASSERT_TRUE(commands.ok()) << commands.error().message();
  ASSERT_TRUE(diagnostics.ok());

  std::vector<Loan<Tiny>> flood = loan_all(**diagnostics);

  EXPECT_EQ(flood.size(), 5U) << "8 chunks, 3 of them reserved for cmd_vel";
  std::vector<Loan<Tiny>> mine;
  for (int i = 0; i < 3; ++i) {
    auto loan = commands->loan();
    ASSERT_TRUE(loan.ok()) << "reserved loan " << i << " refused: " << commands->explain_exhausted();
    mine.push_back(std::move(*loan));
  }
  EXPECT_TRUE(commands->loan().exhausted()) << "beyond the reservation: the shared chunks, and they are gone";
  const std::vector<PoolClassStats> stats = node->pool_stats();
  ASSERT_EQ(stats.size(), 1U);
  EXPECT_EQ(stats[0].reserved_chunks, 3U);
  EXPECT_EQ(stats[0].free_chunks, 0U);
  const PoolTopicShare* cmd = share_of(stats[0], "cmd_vel");
  const PoolTopicShare* diag = share_of(stats[0], "diagnostics");
  ASSERT_TRUE(cmd != nullptr && diag != nullptr);
  EXPECT_EQ(cmd->reserved_chunks, 3U);
  EXPECT_EQ(cmd->chunks_in_use, 3U);
  EXPECT_EQ(diag->reserved_chunks, 0U);
  EXPECT_EQ(diag->chunks_in_use, 5U);
  const std::string why = diagnostics->explain_exhausted();
  EXPECT_NE(why.find("'cmd_vel' 3 (3 reserved)"), std::string::npos) << why;
}

TEST_F(ChunkReservationTest, ARefusingPublisherStaysInsideItsReservation) {
  make_node(8);
  auto sut = node->advertise<Tiny>("cmd_vel", {.reserved_chunks = 2, .beyond_reservation = BeyondReservation::kRefuse});
  ASSERT_TRUE(sut.ok()) << sut.error().message();

  std::vector<Loan<Tiny>> held = loan_all(**sut);

  EXPECT_EQ(held.size(), 2U);
  const std::string why = sut->explain_exhausted();
  EXPECT_NE(why.find("all 2 chunks it reserved"), std::string::npos) << why;
  EXPECT_NE(why.find("beyond_reservation is refuse"), std::string::npos) << why;
  EXPECT_EQ(node->pool_stats()[0].free_chunks, 6U) << "the shared chunks stay for other topics";
}

TEST_F(ChunkReservationTest, ASharingPublisherFallsBackToTheSharedClasses) {
  make_node(8);
  auto sut = node->advertise<Tiny>("cmd_vel", {.reserved_chunks = 2});
  ASSERT_TRUE(sut.ok());

  std::vector<Loan<Tiny>> held = loan_all(**sut);

  EXPECT_EQ(held.size(), 8U);
}

TEST_F(ChunkReservationTest, AReservedChunkServesAgainOnceItsSubscriberLetsGo) {
  make_node(8);
  auto sut = node->advertise<Tiny>("cmd_vel", {.reserved_chunks = 2, .beyond_reservation = BeyondReservation::kRefuse});
  auto sub = node->subscribe<Tiny>("cmd_vel", {.depth = 4});
  ASSERT_TRUE(sut.ok() && sub.ok());
  for (std::uint32_t i = 1; i <= 2; ++i) {
    auto loan = sut->loan();
    ASSERT_TRUE(loan.ok());
    (*loan)->value = i;
    ASSERT_TRUE(sut->publish(std::move(*loan)).ok());
  }
  EXPECT_TRUE(sut->loan().exhausted()) << "both reserved chunks wait in the subscriber's queue";

  {
    auto sample = sub->take();
    ASSERT_TRUE(sample.ok());
    EXPECT_EQ((*sample)->value, 1U);
  }  // dropped: only the publisher's loan bit is left on that chunk
  auto again = sut->loan();

  ASSERT_TRUE(again.ok()) << sut->explain_exhausted();
  (*again)->value = 3;
  ASSERT_TRUE(sut->publish(std::move(*again)).ok());
  auto second = sub->take();
  auto third = sub->take();
  ASSERT_TRUE(second.ok() && third.ok());
  EXPECT_EQ((*second)->value, 2U) << "the chunk still queued was not overwritten";
  EXPECT_EQ((*third)->value, 3U);
  EXPECT_EQ(node->pool_stats()[0].free_chunks, 6U);
}

TEST_F(ChunkReservationTest, AReservationThePoolCannotHoldIsRefusedAndTakesNothing) {
  make_node(4);
  auto first = node->advertise<Tiny>("cmd_vel", {.reserved_chunks = 3});
  ASSERT_TRUE(first.ok());

  auto refused = node->advertise<Tiny>("steering", {.reserved_chunks = 2});

  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kNoSpace);
  const std::string message(refused.error().message());
  EXPECT_NE(message.find("topic 'steering': cannot reserve 2 chunks of the 256 B class"), std::string::npos) << message;
  EXPECT_NE(message.find("only 1 of its 4 are free"), std::string::npos) << message;
  EXPECT_EQ(node->pool_stats()[0].free_chunks, 1U) << "the refused reservation gave back what it took";
  auto too_many = node->advertise<Tiny>("other", {.reserved_chunks = 65});
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(std::string(too_many.error().message()).find("at most 64"), std::string::npos);
  first = Error(ErrorCode::kClosed, "dropped");
  EXPECT_EQ(node->pool_stats()[0].free_chunks, 4U) << "a destroyed publisher's reservation is free again";
  EXPECT_EQ(node->pool_stats()[0].reserved_chunks, 0U);
}

}  // namespace
}  // namespace axon
