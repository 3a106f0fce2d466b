// Bytes endpoints in one process: an untyped topic, bytes that carry a
// typed topic's identity (and never feed its subscribers something else),
// and what a slice subscriber does with bytes that are not its elements.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/one_node_test.hpp"
#include "tests/support/pose_message.hpp"

namespace axon {
namespace {

using test::Pose;

std::span<const std::byte> bytes_of(const auto& value) { return std::as_bytes(std::span(&value, 1)); }

class BytesTest : public test::OneNodeTest {
 protected:
  BytesTest() : OneNodeTest("bytes_test", {{.payload_bytes = 256, .count = 16}, {.payload_bytes = 4096, .count = 4}}) {}
};

TEST_F(BytesTest, AnUntypedTopicCarriesBytesOfAnySize) {
  auto pub = *node->advertise<Bytes>("blob");
  auto sub = *node->subscribe<Bytes>("blob");
  for (const std::size_t n : {0U, 1U, 7U, 4096U}) {
    auto loan = pub->loan(n);
    ASSERT_TRUE(loan.ok()) << loan.error().message();
    for (std::size_t i = 0; i < n; ++i) {
      (*loan)[i] = std::byte(i % 256);
    }
    ASSERT_TRUE(pub->publish(std::move(*loan)).ok());
    auto sample = sub->take();
    ASSERT_TRUE(sample.ok());
    ASSERT_EQ(sample->size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ((*sample)[i], std::byte(i % 256));
    }
  }
}

TEST_F(BytesTest, ATypedEndpointIsRefusedOnAnUntypedTopicAndTheOtherWayRound) {
  auto blob = *node->advertise<Bytes>("blob");
  EXPECT_EQ(node->subscribe<Pose>("blob").error().code(), ErrorCode::kTypeMismatch);
  auto pose = *node->advertise<Pose>("pose");
  auto sut = node->subscribe<Bytes>("pose");
  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kTypeMismatch);
  EXPECT_NE(sut.error().message().find("axon::Bytes"), std::string_view::npos) << sut.error().message();
}

TEST_F(BytesTest, BytesThatCarryATypeReachItsTypedSubscribersAndBack) {
  auto typed_sub = *node->subscribe<Pose>("pose");
  auto bridge_in = *node->advertise_bytes("pose", type_identity_of<Pose>());
  auto bridge_out = *node->subscribe_bytes("pose", type_identity_of<Pose>());
  const Pose pose{.x = 1.5, .y = -2, .stamp = 42};
  ASSERT_TRUE(bridge_in->publish(bytes_of(pose)).ok());

  auto typed = typed_sub->take();
  ASSERT_TRUE(typed.ok()) << typed.error().message();
  EXPECT_EQ(typed->stamp, 42U);
  auto raw = bridge_out->take();
  ASSERT_TRUE(raw.ok());
  ASSERT_EQ(raw->size(), sizeof(Pose));
  Pose copy;
  std::memcpy(&copy, raw->data(), sizeof(Pose));
  EXPECT_EQ(copy.x, pose.x);
  EXPECT_EQ(copy.y, pose.y);
  EXPECT_EQ(copy.stamp, pose.stamp);
}

TEST_F(BytesTest, ABytesPublisherRefusesASizeItsCarriedTypeCannotHave) {
  auto sub = *node->subscribe<Pose>("pose");
  auto sut = *node->advertise_bytes("pose", type_identity_of<Pose>());
  auto loan = sut->loan(sizeof(Pose) - 1);
  ASSERT_TRUE(loan.failed());
  EXPECT_EQ(loan.error().code(), ErrorCode::kInvalidArgument);
  const std::string message(loan.error().message());
  EXPECT_NE(message.find("Pose"), std::string::npos) << message;
  EXPECT_NE(message.find("exactly 24 bytes"), std::string::npos) << message;
  const std::array<std::byte, 25> too_long{};
  EXPECT_EQ(sut->publish_serialized(too_long).error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(sut->loan(sizeof(Pose)).ok());
  EXPECT_TRUE(sub->take().empty()) << "nothing was sent";
}

TEST_F(BytesTest, BytesThatCarryASliceAreAWholeNumberOfItsElements) {
  auto sub = *node->subscribe<Slice<float>>("ranges");
  auto sut = *node->advertise_bytes("ranges", type_identity_of<Slice<float>>());
  EXPECT_EQ(sut->loan(6).error().code(), ErrorCode::kInvalidArgument);
  auto loan = sut->loan(8);
  ASSERT_TRUE(loan.ok());
  const std::array<float, 2> values{1.25F, -3.0F};
  std::memcpy(loan->data(), values.data(), sizeof(values));
  ASSERT_TRUE(sut->publish(std::move(*loan)).ok());
  auto sample = sub->take();
  ASSERT_TRUE(sample.ok());
  ASSERT_EQ(sample->size(), 2U);
  EXPECT_EQ((*sample)[1], -3.0F);
}

TEST_F(BytesTest, BytesThatCarryAnotherTypeAreRefusedNamingBothTypes) {
  auto pub = *node->advertise<Slice<float>>("ranges");
  auto sut = node->subscribe_bytes("ranges", type_identity_of<Slice<double>>());
  test::expect_error_naming(sut, ErrorCode::kTypeMismatch, {"axon::Slice<float>", "axon::Slice<double>"});
}

TEST_F(BytesTest, ASliceSubscriberDropsAndCountsBytesThatAreNotItsElements) {
  // A writer that lies about its shape (a forged identity, as a buggy bridge
  // or hostile process could): the subscriber is the last line of defence.
  auto sub = *node->subscribe<Slice<float>>("ranges");
  TypeIdentity forged = type_identity_of<Slice<float>>();
  forged.size = 1;  // same hash, so it joins; any size passes its own check
  auto liar = *node->advertise_bytes("ranges", forged);
  const std::array<std::byte, 7> seven{};
  ASSERT_TRUE(liar->publish_serialized(seven).ok());
  const std::array<float, 3> three{1, 2, 3};
  ASSERT_TRUE(liar->publish_serialized(std::as_bytes(std::span(three))).ok());

  auto sample = sub->take();
  ASSERT_TRUE(sample.ok()) << "the valid message behind the bad one is handed out";
  EXPECT_EQ(sample->size(), 3U);
  EXPECT_EQ(sample.value().info().sequence, 2U);
  EXPECT_EQ(sub->counters().rejected, 1U);
  EXPECT_EQ(liar->counters().rejected_by_subscribers, 1U);
}

TEST_F(BytesTest, AnExecutorRunsABytesCallback) {
  auto pub = *node->advertise<Bytes>("blob");
  std::size_t got = 0;
  auto subscription = std::make_shared<CallbackSubscription<Bytes>>(*node->subscribe<Bytes>("blob"),
                                                                    [&](const Sample<Bytes>& s) { got += s.size(); });
  SingleThreadedExecutor sut;
  ASSERT_TRUE(sut.add(subscription).ok());
  ASSERT_TRUE(pub->publish(std::as_bytes(std::span("hello", 5))).ok());
  EXPECT_EQ(*sut.spin_some(), 1U);
  EXPECT_EQ(got, 5U);
}

/// A subscriber port whose one message lies at a chosen address.
class OneChunkPort final : public SubscriberPort {
 public:
  explicit OneChunkPort(std::span<const std::byte> payload) : payload_(payload) {}
  TakeResult<ReceivedChunk> take() noexcept override {
    if (taken_) {
      return kNothingQueued;
    }
    taken_ = true;
    ReceivedChunk chunk;
    chunk.payload = payload_.data();
    chunk.info.payload_bytes = static_cast<std::uint32_t>(payload_.size());
    chunk.handle = this;
    return chunk;
  }
  void release(const ReceivedChunk& /*chunk*/) noexcept override { ++released; }
  void reject(const ReceivedChunk& /*chunk*/, std::string_view reason) noexcept override {
    rejected_for = std::string(reason);
  }
  [[nodiscard]] SubscriberCounters counters() const noexcept override { return {}; }
  [[nodiscard]] std::uint64_t publishers_lost() const noexcept override { return 0; }
  [[nodiscard]] std::uint32_t publisher_count() noexcept override { return 1; }
  [[nodiscard]] bool has_data() noexcept override { return !taken_; }
  [[nodiscard]] WakeWord* wake_word() noexcept override { return nullptr; }

  std::string rejected_for;
  int released = 0;

 private:
  std::span<const std::byte> payload_;
  bool taken_ = false;
};

TEST(SliceSubscriber, MisalignedElementsAreRejectedNeverHandedOut) {
  alignas(16) std::array<std::byte, 32> memory{};
  auto port = std::make_shared<OneChunkPort>(std::span<const std::byte>(memory).subspan(4, 16));
  Subscriber<Slice<double>> sut(port, "misaligned", SubscriberQos{});
  EXPECT_TRUE(sut.take().empty());
  EXPECT_NE(port->rejected_for.find("aligned"), std::string::npos) << port->rejected_for;
}

TEST(SliceSubscriber, AnAlignedWholeNumberOfElementsIsASpanOverTheChunk) {
  alignas(16) std::array<std::byte, 32> memory{};
  auto port = std::make_shared<OneChunkPort>(std::span<const std::byte>(memory).subspan(8, 16));
  Subscriber<Slice<double>> sut(port, "aligned", SubscriberQos{});
  {
    auto sample = sut.take();
    ASSERT_TRUE(sample.ok());
    EXPECT_EQ(sample->size(), 2U);
    EXPECT_EQ(static_cast<const void*>(sample->data()), memory.data() + 8) << "in place, not a copy";
  }
  EXPECT_EQ(port->released, 1) << "dropping the sample gives the chunk back";
}

}  // namespace
}  // namespace axon
