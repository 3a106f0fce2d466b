// Slices (Publisher<Slice<E>>::loan(n)) and bytes endpoints in one process:
// sizes chosen at run time, zeroed loans, the chunk-class limit, type
// identity, validation of what arrives, and executors. Across processes:
// tests/integration/slice_process_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/one_node_test.hpp"

namespace axon {
namespace {

struct Point {
  static constexpr std::string_view kAxonTypeName = "slice_test::Point";
  float x = 0;
  float y = 0;
  float z = 0;
  std::uint32_t ring = 0;
};

struct Pose {
  double x = 0;
  double y = 0;
};

class SliceTest : public test::OneNodeTest {
 protected:
  SliceTest()
      : OneNodeTest("slice_test", {{.payload_bytes = 256, .count = 16}, {.payload_bytes = 64 * 1024, .count = 4}}) {}
};

template <class E>
std::vector<E> round_trip(Node& node, const std::string& topic, std::size_t count,
                          const std::function<E(std::size_t)>& make) {
  auto pub = *node.advertise<Slice<E>>(topic);
  auto sub = *node.subscribe<Slice<E>>(topic);
  auto loan = pub->loan(count);
  EXPECT_TRUE(loan.ok()) << loan.error().message();
  EXPECT_EQ(loan->size(), count);
  for (std::size_t i = 0; i < count; ++i) {
    (*loan)[i] = make(i);
  }
  auto status = pub->publish(std::move(*loan));
  EXPECT_TRUE(status.ok()) << status.error().message();
  EXPECT_EQ(status->delivered, 1U);
  auto sample = sub->take();
  EXPECT_TRUE(sample.ok()) << sample.error().message();
  if (!sample) {
    return {};
  }
  EXPECT_EQ(sample.value().info().payload_bytes, count * sizeof(E));
  std::span<const E> elements = **sample;
  return {elements.begin(), elements.end()};
}

TEST_F(SliceTest, BytesOfARunTimeSizeArriveAsASpanOverTheSameMemory) {
  for (const std::size_t count :
       {std::size_t{0}, std::size_t{1}, std::size_t{255}, std::size_t{256}, std::size_t{257}, std::size_t{65536}}) {
    const auto got = round_trip<std::uint8_t>(*node, "image", count, [](std::size_t i) { return i * 7 % 251; });
    ASSERT_EQ(got.size(), count);
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_EQ(got[i], i * 7 % 251) << "element " << i << " of " << count;
    }
  }
}

TEST_F(SliceTest, FloatsAndStructsArriveIntact) {
  const auto floats = round_trip<float>(*node, "ranges", 1000, [](std::size_t i) { return 0.5F * float(i); });
  ASSERT_EQ(floats.size(), 1000U);
  EXPECT_EQ(floats[999], 499.5F);
  const auto points = round_trip<Point>(*node, "cloud", 4096, [](std::size_t i) {
    return Point{.x = float(i), .y = -float(i), .z = 1, .ring = std::uint32_t(i % 16)};
  });
  ASSERT_EQ(points.size(), 4096U);
  EXPECT_EQ(points[4095].x, 4095.0F);
  EXPECT_EQ(points[4095].ring, 15U);
}

TEST_F(SliceTest, AnEmptySliceIsAValidMessage) {
  auto pub = *node->advertise<Slice<float>>("empty");
  auto sub = *node->subscribe<Slice<float>>("empty");
  auto loan = pub->loan(0);
  ASSERT_TRUE(loan.ok()) << loan.error().message();
  EXPECT_EQ(loan->size(), 0U);
  ASSERT_TRUE(pub->publish(std::move(*loan)).ok());
  auto sample = sub->take();
  ASSERT_TRUE(sample.ok());
  EXPECT_TRUE(sample->empty());
  EXPECT_EQ(sample.value().info().sequence, 1U);
  EXPECT_EQ(sub->counters().rejected, 0U);
}

TEST_F(SliceTest, AZeroedLoanIsZeroEvenInAChunkThatHeldAMessage) {
  auto pub = *node->advertise<Slice<std::uint32_t>>("zeroed");
  auto sub = *node->subscribe<Slice<std::uint32_t>>("zeroed");
  for (int round = 0; round < 20; ++round) {  // every chunk of the class has held 0xFFFFFFFF
    auto dirty = pub->loan(64);
    ASSERT_TRUE(dirty.ok());
    std::ranges::fill(*dirty, 0xFFFFFFFFU);
    ASSERT_TRUE(pub->publish(std::move(*dirty)).ok());
    ASSERT_TRUE(sub->take().ok());
  }
  auto sut = pub->loan(64, kZeroed);
  ASSERT_TRUE(sut.ok());
  EXPECT_TRUE(std::ranges::all_of(*sut, [](std::uint32_t v) { return v == 0; }));
}

TEST_F(SliceTest, TheLargestClassIsServedAndOneElementMoreIsAnErrorNamingTheSizesAndTheKey) {
  auto pub = *node->advertise<Slice<float>>("largest");
  auto sub = *node->subscribe<Slice<float>>("largest");
  auto largest = pub->loan(std::size_t{64} * 1024 / sizeof(float));
  ASSERT_TRUE(largest.ok()) << largest.error().message();
  (*largest)[16383] = 3.0F;
  ASSERT_TRUE(pub->publish(std::move(*largest)).ok());
  auto sample = sub->take();
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(sample->size(), 16384U);
  EXPECT_EQ((*sample)[16383], 3.0F);

  auto sut = pub->loan(std::size_t{64} * 1024 / sizeof(float) + 1);
  ASSERT_TRUE(sut.failed()) << "too large is an error, not back-pressure";
  EXPECT_EQ(sut.error().code(), ErrorCode::kPayloadTooLarge);
  const std::string message(sut.error().message());
  EXPECT_NE(message.find("65540"), std::string::npos) << message;
  EXPECT_NE(message.find("65536"), std::string::npos) << message;
  EXPECT_NE(message.find("pool.chunk_classes"), std::string::npos) << message;
}

TEST_F(SliceTest, ACountWhoseSizeOverflowsIsAnErrorNotAWrappedSize) {
  auto pub = *node->advertise<Slice<Point>>("overflow");
  auto sut = pub->loan(std::numeric_limits<std::size_t>::max() / 4);
  ASSERT_TRUE(sut.failed());
  EXPECT_EQ(sut.error().code(), ErrorCode::kPayloadTooLarge);
}

TEST_F(SliceTest, ASliceOfAnotherElementTypeIsRefusedNamingBothTypes) {
  auto pub = *node->advertise<Slice<float>>("ranges");
  auto sut = node->subscribe<Slice<double>>("ranges");
  test::expect_error_naming(sut, ErrorCode::kTypeMismatch, {"axon::Slice<float>", "axon::Slice<double>"});
}

TEST_F(SliceTest, ASliceAndASingleElementOfTheSameTypeAreDifferentTypes) {
  auto pub = *node->advertise<Slice<Pose>>("poses");
  EXPECT_EQ(node->subscribe<Pose>("poses").error().code(), ErrorCode::kTypeMismatch);
  EXPECT_EQ(node->advertise<Bytes>("poses").error().code(), ErrorCode::kTypeMismatch);
}

TEST_F(SliceTest, PublishingASpanCopiesItIntoOneMessage) {
  auto pub = *node->advertise<Slice<std::uint16_t>>("copied");
  auto sub = *node->subscribe<Slice<std::uint16_t>>("copied");
  std::vector<std::uint16_t> values(300);
  std::iota(values.begin(), values.end(), std::uint16_t{1});
  ASSERT_TRUE(pub->publish(std::span<const std::uint16_t>(values)).ok());
  auto sample = sub->take();
  ASSERT_TRUE(sample.ok());
  EXPECT_TRUE(std::ranges::equal(**sample, values));
}

TEST_F(SliceTest, SerializedBytesThatAreNotWholeElementsAreRefusedByThePublisher) {
  auto pub = *node->advertise<Slice<float>>("ranges");
  auto sub = *node->subscribe<Slice<float>>("ranges");
  const std::array<std::byte, 7> seven{};
  auto sut = pub->publish_serialized(seven);
  ASSERT_TRUE(sut.failed());
  EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(sut.error().message().find("axon::Slice<float>"), std::string_view::npos) << sut.error().message();
  EXPECT_TRUE(sub->take().empty());
  const std::array<std::byte, 8> eight{};
  EXPECT_TRUE(pub->publish_serialized(eight).ok());
  EXPECT_EQ(sub->take()->size(), 2U);
}

TEST_F(SliceTest, ALoanOfAnotherPublisherIsRefusedAndStaysWithTheCaller) {
  auto a = *node->advertise<Slice<float>>("a");
  auto b = *node->advertise<Slice<float>>("b");
  auto loan = a->loan(4);
  ASSERT_TRUE(loan.ok());
  auto status = b->publish(std::move(*loan));
  EXPECT_EQ(status.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(loan->size(), 4U) << "the loan is unchanged";
  EXPECT_TRUE(a->publish(std::move(*loan)).ok());
}

TEST_F(SliceTest, AnExecutorHandsSlicesToACallback) {
  auto pub = *node->advertise<Slice<float>>("scan");
  std::vector<std::size_t> sizes;
  auto subscription = *node->subscribe<Slice<float>>("scan", [&](const Sample<Slice<float>>& s) {
    sizes.push_back(s.size());
    EXPECT_TRUE(std::ranges::all_of(s, [&](float v) { return v == float(s.size()); }));
  });
  SingleThreadedExecutor sut;
  ASSERT_TRUE(sut.add(subscription).ok());
  for (const std::size_t n : {3U, 0U, 700U}) {
    auto loan = pub->loan(n);
    ASSERT_TRUE(loan.ok());
    std::ranges::fill(*loan, float(n));
    ASSERT_TRUE(pub->publish(std::move(*loan)).ok());
  }
  EXPECT_EQ(*sut.spin_some(), 3U);
  EXPECT_EQ(sizes, (std::vector<std::size_t>{3, 0, 700}));
}

// --- what a subscriber checks before it hands a span out ---------------------

TEST(SliceView, ASizeThatIsNotAWholeNumberOfElementsIsRefused) {
  alignas(8) std::array<std::byte, 16> bytes{};
  EXPECT_TRUE(detail::view_elements<float>(std::span(bytes).first(15)).elements.empty());
  EXPECT_FALSE(detail::view_elements<float>(std::span(bytes).first(15)).problem.empty());
  EXPECT_EQ(detail::view_elements<float>(std::span(bytes).first(16)).elements.size(), 4U);
  EXPECT_TRUE(detail::view_elements<float>(std::span(bytes).first(0)).problem.empty());
}

TEST(SliceView, MisalignedElementsAreRefused) {
  alignas(8) std::array<std::byte, 24> bytes{};
  const auto sut = detail::view_elements<double>(std::span(bytes).subspan(4, 16));
  EXPECT_TRUE(sut.elements.empty());
  EXPECT_NE(sut.problem.find("aligned"), std::string_view::npos);
  EXPECT_EQ(detail::view_elements<double>(std::span(bytes).subspan(8, 16)).elements.size(), 2U);
}

}  // namespace
}  // namespace axon
