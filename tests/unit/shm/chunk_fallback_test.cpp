// Which chunk classes a loan may take when its own is empty (issue 13, item
// 4): small messages never take the large chunks other topics need, and
// explain_exhausted() says who holds the chunks.
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

struct Frame {
  std::byte pixels[16U << 20U];
};

class ChunkFallbackTest : public ::testing::Test {
 protected:
  void TearDown() override {
    node.reset();
    EXPECT_TRUE(test::domain_files(domain).empty()) << "files left in /dev/shm";
  }
  std::shared_ptr<Node> make_node(NodeOptions options) {
    options.domain_id = domain;
    auto created = Node::create("fallback_test", std::move(options));
    EXPECT_TRUE(created.ok()) << created.error().message();
    return created.ok() ? *created : nullptr;
  }
  std::uint32_t domain = test::unique_domain();
  std::shared_ptr<Node> node;
};

TEST_F(ChunkFallbackTest, HeldTinyLoansNeverTakeTheLargeChunksAndTheErrorNamesThePublishersLoans) {
  node = make_node({});  // the default classes: 1024 x 256 B ... 2 x 16 MiB
  auto tiny = node->advertise<Tiny>("tiny");
  auto camera = node->advertise<Frame>("camera/front");
  ASSERT_TRUE(tiny.ok() && camera.ok());
  std::vector<Loan<Tiny>> held;
  LoanResult<Loan<Tiny>> loan = tiny->loan();
  for (int i = 0; i < 2000 && loan.ok(); ++i) {
    held.push_back(std::move(*loan));
    loan = tiny->loan();
  }

  ASSERT_FALSE(loan.ok());
  EXPECT_TRUE(loan.exhausted());
  EXPECT_EQ(held.size(), 1024U + 256U) << "a 4 B loan falls through one class (256 B -> 4 KiB), no further";
  const std::string message = tiny->explain_exhausted();
  EXPECT_NE(message.find("this publisher holds 1280 in loans not yet published"), std::string::npos) << message;
  EXPECT_NE(message.find("its subscribers hold 0"), std::string::npos) << message;
  EXPECT_NE(message.find("chunk_fallback"), std::string::npos) << message;
  const std::vector<PoolClassStats> stats = node->pool_stats();
  EXPECT_EQ(stats.back().free_chunks, 2U) << "both 16 MiB chunks are left for the camera";
  auto frame = camera->loan();
  EXPECT_TRUE(frame.ok()) << frame.error().message();
}

TEST_F(ChunkFallbackTest, TheNodesPolicyCanAllowEveryLargerClass) {
  node = make_node({.chunk_classes = {{.payload_bytes = 256, .count = 2}, {.payload_bytes = 1 << 20, .count = 1}},
                    .chunk_fallback = ChunkFallback{.max_classes = 1, .max_ratio = 0}});
  auto tiny = node->advertise<Tiny>("tiny");
  ASSERT_TRUE(tiny.ok());
  std::vector<Loan<Tiny>> held;
  for (int i = 0; i < 3; ++i) {
    auto loan = tiny->loan();
    ASSERT_TRUE(loan.ok()) << i << ": " << loan.error().message();
    held.push_back(std::move(*loan));
  }

  auto refused = tiny->loan();

  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.exhausted());
  EXPECT_NE(tiny->explain_exhausted().find("holds 3 in loans"), std::string::npos) << tiny->explain_exhausted();
}

TEST_F(ChunkFallbackTest, TheMessageCountsChunksSubscribersHold) {
  node = make_node({.chunk_classes = {{.payload_bytes = 256, .count = 4}}});
  auto pub = node->advertise<Tiny>("tiny");
  auto sub = node->subscribe<Tiny>("tiny", {.depth = 8});
  ASSERT_TRUE(pub.ok() && sub.ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(pub->publish(Tiny{}).ok());
  }
  auto kept = pub->loan();
  ASSERT_TRUE(kept.ok());

  auto refused = pub->loan();

  ASSERT_FALSE(refused.ok());
  const std::string message = pub->explain_exhausted();
  EXPECT_NE(message.find("holds 1 in loans"), std::string::npos) << message;
  EXPECT_NE(message.find("its subscribers hold 3 (queued or taken)"), std::string::npos) << message;
}

}  // namespace
}  // namespace axon
