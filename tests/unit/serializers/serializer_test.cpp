// The three serializers and a user-defined one, in one process.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "axon/axon.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "object_list.hpp"
#include "point_cloud.pb.h"
#include "tests/support/child_process.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/schema_messages.hpp"

// A type of the user's own, with its own serializer (the customization point).
namespace user {
struct Note {
  std::string text;
  std::vector<float> values;
};
}  // namespace user

template <>
struct axon::Serializer<user::Note> {
  static constexpr std::string_view kName = "user-note";
  static constexpr DataPath kDataPath = DataPath::kSerializedInSharedMemory;
  static constexpr bool kReadsInPlace = false;
  static TypeIdentity identity() {
    TypeIdentity id;
    id.name = "user::Note";
    id.hash = detail::fnv1a("user::Note v1");
    id.serializer = std::string(kName);
    return id;
  }
  static std::size_t encoded_size(const user::Note& n) { return 8 + n.text.size() + n.values.size() * sizeof(float); }
  static std::size_t encode(const user::Note& n, std::span<std::byte> out) noexcept {
    const auto text_bytes = static_cast<std::uint32_t>(n.text.size());
    const auto count = static_cast<std::uint32_t>(n.values.size());
    std::memcpy(out.data(), &text_bytes, 4);
    std::memcpy(out.data() + 4, &count, 4);
    std::memcpy(out.data() + 8, n.text.data(), text_bytes);
    std::memcpy(out.data() + 8 + text_bytes, n.values.data(), count * sizeof(float));
    return 8 + text_bytes + count * sizeof(float);
  }
  static bool decode(std::span<const std::byte> in, user::Note& n) noexcept {
    std::uint32_t text_bytes = 0;
    std::uint32_t count = 0;
    if (in.size() < 8) {
      return false;
    }
    std::memcpy(&text_bytes, in.data(), 4);
    std::memcpy(&count, in.data() + 4, 4);
    if (in.size() != 8 + std::size_t{text_bytes} + std::size_t{count} * sizeof(float)) {
      return false;
    }
    n.text.assign(reinterpret_cast<const char*>(in.data() + 8), text_bytes);
    n.values.resize(count);
    std::memcpy(n.values.data(), in.data() + 8 + text_bytes, count * sizeof(float));
    return true;
  }
};

namespace axon {
namespace {

using test::fb::ObjectList;
using FbPointCloud = test::fb::PointCloud;
using PbObjectList = test::pb::ObjectList;
using PbPointCloud = ::axon::schemas::pb::PointCloud;

// Publisher<T> and Subscriber<T> have one copy semantics for every T
// (issue 14): move-only, for raw structs, FlatBuffers tables, Protobuf
// messages and user serializers alike (publisher.hpp says why).
struct RawPose {
  double x = 0;
};
template <class T>
constexpr bool kMoveOnly = !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
                           std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>;
static_assert(kMoveOnly<Publisher<RawPose>> && kMoveOnly<Subscriber<RawPose>>, "raw struct endpoints");
static_assert(kMoveOnly<Publisher<ObjectList>> && kMoveOnly<Subscriber<ObjectList>>, "FlatBuffers endpoints");
static_assert(kMoveOnly<Publisher<PbObjectList>> && kMoveOnly<Subscriber<PbObjectList>>, "Protobuf endpoints");
static_assert(kMoveOnly<Publisher<user::Note>> && kMoveOnly<Subscriber<user::Note>>, "user serializer endpoints");

std::uint32_t total_free(const Node& node) {
  std::uint32_t free = 0;
  for (const auto& c : node.pool_stats()) {
    free += c.free_chunks;
  }
  return free;
}

class Serializers : public ::testing::Test {
 protected:
  void SetUp() override {
    NodeOptions options;
    options.domain_id = domain;
    options.chunk_classes = {{.payload_bytes = 4096, .count = 16},
                             {.payload_bytes = 64 * 1024, .count = 4},
                             {.payload_bytes = 2 * 1024 * 1024, .count = 2}};
    node = *Node::create("serializers", options);
  }
  void TearDown() override {
    node.reset();
    EXPECT_TRUE(test::domain_files(domain).empty());
  }
  std::uint32_t domain = test::unique_domain();
  std::shared_ptr<Node> node;
};

TEST_F(Serializers, FlatBuffersAreBuiltInAChunkAndReadInPlace) {
  auto pub = node->advertise<ObjectList>("objects");
  auto sub = node->subscribe<ObjectList>("objects", {.verification = Verification::kAlways});
  ASSERT_TRUE(pub.ok() && sub.ok());
  auto loan = pub->loan_builder(2500);
  ASSERT_TRUE(loan.ok());
  auto root = test::build_object_list(loan->builder(), 5, 128);
  const std::uint8_t* built_at = nullptr;
  auto status = pub->publish(std::move(*loan), root);
  ASSERT_TRUE(status.ok()) << status.error().message();
  EXPECT_EQ(status->delivered, 1U);
  auto sample = sub->take();
  ASSERT_TRUE(sample.ok());
  EXPECT_TRUE(test::object_list_ok(**sample, 5, 128));
  EXPECT_LT((*sample).info().payload_bytes, 4096U) << "128 targets are about 2 KiB";
  (void)built_at;
}

TEST_F(Serializers, AFlatBufferGrowsIntoALargerChunkClassWhenItMust) {
  const std::uint32_t free_at_start = total_free(*node);
  auto pub = node->advertise<FbPointCloud>("cloud");
  auto sub = node->subscribe<FbPointCloud>("cloud", {.verification = Verification::kAlways});
  auto loan = pub->loan_builder(64);  // far too small: it has to grow twice
  ASSERT_TRUE(loan.ok());
  auto& fbb = loan->builder();
  constexpr std::uint32_t kPoints = 65'536;  // 1 MiB
  test::fb::Point* points = nullptr;
  auto vector = axon::create_uninitialized_struct_vector(fbb, kPoints, &points);
  for (std::uint32_t i = 0; i < kPoints; ++i) {
    points[i] = test::fb::Point(static_cast<float>(i), 1, 2, 3);
  }
  const test::fb::Header header(1, 2, 3);
  ASSERT_TRUE(pub->publish(std::move(*loan), test::fb::CreatePointCloud(fbb, &header, vector)).ok());
  EXPECT_EQ(total_free(*node), free_at_start - 1) << "the smaller chunks went back while it grew";
  auto sample = sub->take();
  ASSERT_TRUE(sample.ok());
  ASSERT_EQ(sample->points()->size(), kPoints);
  EXPECT_EQ(sample->points()->Get(kPoints - 1)->x(), static_cast<float>(kPoints - 1));
}

TEST_F(Serializers, ABuilderDroppedUnpublishedGivesItsChunkBack) {
  const std::uint32_t free_at_start = total_free(*node);
  auto pub = node->advertise<ObjectList>("objects");
  {
    auto loan = pub->loan_builder(100);
    test::build_object_list(loan->builder(), 1, 128);
    EXPECT_EQ(total_free(*node), free_at_start - 1);
  }
  EXPECT_EQ(total_free(*node), free_at_start);
  EXPECT_TRUE(pub->loan_builder().ok()) << "the builder is free for the next message";
}

TEST_F(Serializers, OnlyOneBuilderLoanPerPublisherAtATime) {
  auto pub = node->advertise<ObjectList>("objects");
  auto first = pub->loan_builder();
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(pub->loan_builder().ok());
}

TEST_F(Serializers, AFlatBufferLargerThanTheLargestClassFailsAtPublishNamingBothSizes) {
  auto pub = node->advertise<FbPointCloud>("cloud");
  auto loan = pub->loan_builder();
  auto& fbb = loan->builder();
  test::fb::Point* points = nullptr;
  auto vector = axon::create_uninitialized_struct_vector(fbb, 200'000, &points);  // 3.2 MB
  std::memset(static_cast<void*>(points), 0, 200'000 * sizeof(test::fb::Point));
  const test::fb::Header header(1, 2, 3);
  auto status = pub->publish(std::move(*loan), test::fb::CreatePointCloud(fbb, &header, vector));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kPayloadTooLarge);
  EXPECT_NE(status.error().message().find("2097152"), std::string_view::npos) << status.error().message();
}

TEST_F(Serializers, ProtobufIsSerializedIntoAChunkAndDecodedIntoAReusedObject) {
  auto pub = node->advertise<PbObjectList>("objects");
  auto sub = node->subscribe<PbObjectList>("objects");
  ASSERT_TRUE(pub.ok() && sub.ok());
  EXPECT_EQ(pub->data_path(), DataPath::kSerializedInSharedMemory);
  PbObjectList list;
  const PbObjectList* first_object = nullptr;
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    test::fill_object_list(list, seq, 128);
    ASSERT_TRUE(pub->publish(list).ok());
    auto sample = sub->take();
    ASSERT_TRUE(sample.ok());
    EXPECT_TRUE(test::object_list_ok(**sample, seq, 128));
    EXPECT_EQ((*sample).data(), nullptr) << "a decoded sample does not pin a chunk";
    if (first_object == nullptr) {
      first_object = (*sample).value();
    }
    EXPECT_EQ((*sample).value(), first_object) << "the same object is reused once released";
  }
}

TEST_F(Serializers, ProtobufSamplesHeldAtOnceAreBoundedWithoutLosingMessages) {
  auto pub = node->advertise<PbObjectList>("objects");
  auto sub = node->subscribe<PbObjectList>("objects", {.max_held_samples = 2});
  PbObjectList list;
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    test::fill_object_list(list, seq, 4);
    ASSERT_TRUE(pub->publish(list).ok());
  }
  auto a = sub->take();
  auto b = sub->take();
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = sub->take();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), ErrorCode::kTooManySamples);
  a = TakeResult<Sample<PbObjectList>>(kNothingQueued);  // drops the sample
  auto third = sub->take();
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->header().sequence(), 3U) << "the third message waited in the queue";
}

TEST_F(Serializers, AProtobufMessageLargerThanTheLargestClassIsRefusedAtPublish) {
  auto pub = node->advertise<PbPointCloud>("cloud");
  PbPointCloud cloud;
  cloud.mutable_xyzi()->Resize(1'000'000, 1.0F);  // 4 MB
  auto status = pub->publish(cloud);
  test::expect_error_naming(status, ErrorCode::kPayloadTooLarge, {"4000005", "2097152"});
}

TEST_F(Serializers, RequireZeroCopyRefusesProtobufAndAcceptsRawAndFlatBuffers) {
  auto pb = node->subscribe<PbObjectList>("pb", {.require_zero_copy = true});
  ASSERT_FALSE(pb.ok());
  EXPECT_EQ(pb.error().code(), ErrorCode::kRequirementNotMet);
  EXPECT_NE(pb.error().message().find("serialized in shared memory"), std::string_view::npos);
  EXPECT_FALSE(node->advertise<PbObjectList>("pb", {.require_zero_copy = true}).ok());
  EXPECT_TRUE(node->subscribe<ObjectList>("fb", {.require_zero_copy = true}).ok());
  EXPECT_TRUE(node->advertise<ObjectList>("fb", {.require_zero_copy = true}).ok());
  EXPECT_TRUE(node->advertise<schemas::raw::ObjectList>("raw", {.require_zero_copy = true}).ok());
}

TEST_F(Serializers, IdentityMismatchIsRefusedForEachSerializer) {
  auto fb = node->advertise<ObjectList>("fb");
  auto fb_other = node->subscribe<FbPointCloud>("fb");
  ASSERT_FALSE(fb_other.ok());
  EXPECT_NE(fb_other.error().message().find("axon.schemas.fb.ObjectList"), std::string_view::npos);
  EXPECT_NE(fb_other.error().message().find("axon.schemas.fb.PointCloud"), std::string_view::npos);

  auto pb = node->advertise<PbObjectList>("pb");
  auto pb_other = node->subscribe<PbPointCloud>("pb");
  ASSERT_FALSE(pb_other.ok());
  EXPECT_NE(pb_other.error().message().find("axon.schemas.pb.ObjectList"), std::string_view::npos);
  EXPECT_NE(pb_other.error().message().find("axon.schemas.pb.PointCloud"), std::string_view::npos);

  auto across = node->subscribe<PbObjectList>("fb");
  ASSERT_FALSE(across.ok());
  EXPECT_EQ(across.error().code(), ErrorCode::kTypeMismatch);
  EXPECT_NE(across.error().message().find("flatbuffers"), std::string_view::npos);
  EXPECT_NE(across.error().message().find("protobuf"), std::string_view::npos);

  auto raw = node->advertise<schemas::raw::ObjectList>("raw");
  EXPECT_EQ(node->subscribe<ObjectList>("raw").error().code(), ErrorCode::kTypeMismatch);
}

TEST_F(Serializers, SameProcessFlatBuffersSkipVerificationUnlessAskedFor) {
  auto pub = node->advertise<ObjectList>("objects");
  auto trusting = node->subscribe<ObjectList>("objects");
  auto strict = node->subscribe<ObjectList>("objects", {.verification = Verification::kAlways});
  const std::vector<std::byte> garbage(64, std::byte{0xFF});
  ASSERT_TRUE(pub->publish_serialized(garbage).ok());
  EXPECT_TRUE(trusting->take().ok()) << "written by this process: not verified (kCrossProcess)";
  EXPECT_TRUE(strict->take().empty());
  EXPECT_EQ(strict->counters().rejected, 1U);
}

TEST_F(Serializers, AUserSerializerCarriesItsOwnType) {
  auto pub = node->advertise<user::Note>("notes");
  auto sub = node->subscribe<user::Note>("notes");
  ASSERT_TRUE(pub.ok() && sub.ok());
  ASSERT_TRUE(pub->publish(user::Note{.text = "brake check", .values = {1.5F, 2.5F}}).ok());
  auto sample = sub->take();
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(sample->text, "brake check");
  EXPECT_EQ(sample->values, (std::vector<float>{1.5F, 2.5F}));
  const std::vector<std::byte> truncated(5);
  ASSERT_TRUE(pub->publish_serialized(truncated).ok());
  EXPECT_EQ(sub->take().error().code(), ErrorCode::kMalformed);
}

}  // namespace
}  // namespace axon
