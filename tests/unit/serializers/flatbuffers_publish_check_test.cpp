// Issue 13: a FlatBuffers publisher verifies its first message (every message
// when asked, and any built with the struct-vector pitfall), so a message its
// subscribers would drop is an error from publish(), not a silent loss; and
// what subscribers still reject is counted where the publisher reads it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "axon/axon.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/struct_size_messages.hpp"

namespace axon {
namespace {

using test::VectorCall;
using Point = test::StructCombo<test::sizes::V12A4, test::sizes::S12A4, 12, 4>;  // three floats
using Wide = test::StructCombo<test::sizes::V16A8, test::sizes::S16A8, 16, 8>;

std::uint32_t total_free(const Node& node) {
  std::uint32_t free = 0;
  for (const auto& c : node.pool_stats()) {
    free += c.free_chunks;
  }
  return free;
}

/// Builds a valid message in `loan`, then (with `corrupt`) makes its vector
/// claim more elements than the buffer holds: a message every Verifier
/// rejects, built without the struct-vector pitfall.
template <class Combo>
flatbuffers::Offset<typename Combo::Table> build(FlatBufferLoan<typename Combo::Table>& loan, std::uint64_t stamp,
                                                 bool corrupt) {
  auto& fbb = loan.builder();
  typename Combo::Struct* out = nullptr;
  auto items = create_uninitialized_struct_vector(fbb, 4, &out);
  std::memset(static_cast<void*>(out), 1, 4 * sizeof(*out));
  if (corrupt) {
    // The length field sits right before the elements.
    flatbuffers::WriteScalar(reinterpret_cast<std::uint8_t*>(out) - sizeof(flatbuffers::uoffset_t),
                             flatbuffers::uoffset_t{0x10000000});
  }
  typename Combo::Table::Builder builder(fbb);
  builder.add_stamp(stamp);
  builder.add_items(items);
  return builder.Finish();
}

class FlatBuffersPublishCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    NodeOptions options;
    options.domain_id = domain;
    options.chunk_classes = {{.payload_bytes = 4096, .count = 16}};
    node = *Node::create("publish-check", options);
  }
  void TearDown() override {
    node.reset();
    EXPECT_TRUE(test::domain_files(domain).empty());
  }
  std::uint32_t domain = test::unique_domain();
  std::shared_ptr<Node> node;
};

TEST_F(FlatBuffersPublishCheck, AMessageBuiltWithTheStructVectorPitfallIsAnErrorNotASilentLoss) {
  const std::uint32_t free_at_start = total_free(*node);
  auto pub = node->advertise<Point::Table>("points");
  auto sub = node->subscribe<Point::Table>("points", {.depth = 64, .verification = Verification::kAlways});
  ASSERT_TRUE(pub.ok() && sub.ok());
  int refused = 0;
  int published = 0;
  for (std::size_t count = 0; count < 24; ++count) {
    for (std::uint16_t tag : {std::uint16_t{0}, std::uint16_t{5}}) {
      auto loan = (*pub)->loan_builder();
      ASSERT_TRUE(loan.ok());
      auto root =
          test::build_struct_message<Point>(loan->builder(), VectorCall::kUpstreamUninitialized, count, count, tag);
      auto status = (*pub)->publish(std::move(*loan), root);
      if (!status.ok()) {
        ++refused;
        EXPECT_EQ(status.error().code(), ErrorCode::kMalformed);
        const std::string message(status.error().message());
        for (const char* needed :
             {"topic 'points'", "flatbuffers::Verifier", "axon.schemas.fb.sizes.V12A4", "12-byte structs",
              "CreateUninitializedVectorOfStructs", "axon::create_uninitialized_struct_vector", "not published"}) {
          EXPECT_NE(message.find(needed), std::string::npos) << "missing '" << needed << "' in: " << message;
        }
        continue;
      }
      ++published;
      EXPECT_EQ(status->delivered, 1U);
      auto sample = (*sub)->take();
      ASSERT_TRUE(sample.ok()) << "a message publish() accepted reaches the subscriber";
    }
  }
  EXPECT_GT(refused, 0) << "the pitfall builds bad buffers for some of these layouts";
  EXPECT_GT(published, 0) << "and good ones for others, which are served";
  EXPECT_EQ((*sub)->counters().rejected, 0U) << "no message published that the subscriber drops";
  EXPECT_EQ((*pub)->counters().rejected_by_subscribers, 0U);
  (*pub).reset();
  (*sub).reset();
  EXPECT_EQ(total_free(*node), free_at_start) << "refused messages gave their chunks back";
}

TEST_F(FlatBuffersPublishCheck, TheFirstMessageIsVerifiedAndSubscriberRejectionsReachThePublisher) {
  auto pub = node->advertise<Wide::Table>("wide");
  auto sub = node->subscribe<Wide::Table>("wide", {.depth = 16, .verification = Verification::kAlways});
  ASSERT_TRUE(pub.ok() && sub.ok());
  auto publish = [&](std::uint64_t stamp, bool corrupt) {
    auto loan = (*pub)->loan_builder();
    EXPECT_TRUE(loan.ok());
    auto root = build<Wide>(*loan, stamp, corrupt);
    return (*pub)->publish(std::move(*loan), root);
  };
  auto first = publish(1, true);
  ASSERT_FALSE(first.ok()) << "the first message is verified on the publishing side";
  EXPECT_EQ(first.error().code(), ErrorCode::kMalformed);
  EXPECT_NE(first.error().message().find("not published"), std::string_view::npos) << first.error().message();
  ASSERT_TRUE(publish(2, false).ok());
  // Once one message passed, the default checks no more (its cost stays off
  // the steady state): this one goes out, and the subscriber drops it.
  auto third = publish(3, true);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->delivered, 1U);
  auto good = (*sub)->take();
  ASSERT_TRUE(good.ok());
  EXPECT_EQ((*good)->stamp(), 2U);
  EXPECT_FALSE((*sub)->take().ok()) << "the corrupt one never reaches user code";
  EXPECT_EQ((*sub)->counters().rejected, 1U);
  EXPECT_EQ((*pub)->counters().rejected_by_subscribers, 1U) << "the publisher sees that its message was dropped";
  (*sub).reset();  // the connection goes: its count stays with the publisher
  ASSERT_TRUE(publish(4, false).ok());
  EXPECT_EQ((*pub)->counters().rejected_by_subscribers, 1U);
}

TEST_F(FlatBuffersPublishCheck, VerifyEveryMessageRefusesEveryBadMessage) {
  auto pub = node->advertise<Wide::Table>("wide", {.verify_every_message = true});
  auto sub = node->subscribe<Wide::Table>("wide", {.verification = Verification::kAlways});
  ASSERT_TRUE(pub.ok() && sub.ok());
  for (std::uint64_t stamp = 1; stamp <= 6; ++stamp) {
    auto loan = (*pub)->loan_builder();
    ASSERT_TRUE(loan.ok());
    const bool corrupt = stamp % 2 == 0;
    auto root = build<Wide>(*loan, stamp, corrupt);
    auto status = (*pub)->publish(std::move(*loan), root);
    EXPECT_EQ(status.ok(), !corrupt) << "message " << stamp;
  }
  int taken = 0;
  while ((*sub)->take().ok()) {
    ++taken;
  }
  EXPECT_EQ(taken, 3);
  EXPECT_EQ((*sub)->counters().rejected, 0U);
  EXPECT_EQ((*pub)->counters().published, 3U);
}

}  // namespace
}  // namespace axon
