// replay_type_of(): a recorded channel's axon.* metadata becomes the declared type play publishes as; channels
// that cannot be replayed get their reason.
#include "src/tools/axon/play/replay_channels.hpp"

#include <gtest/gtest.h>

#include <string>

namespace axon::tools {
namespace {

mcap::Channel recorded_channel(std::string serializer, std::string encoding) {
  return mcap::Channel{.id = 1,
                       .schema_id = 1,
                       .topic = "rec/topic",
                       .message_encoding = std::move(encoding),
                       .metadata = {{"axon.type_name", "ns.Type"},
                                    {"axon.type_hash", "00000000deadbeef"},
                                    {"axon.serializer", std::move(serializer)},
                                    {"axon.type_size", "32"},
                                    {"axon.type_align", "8"},
                                    {"axon.type_version", "3"},
                                    {"axon.max_payload_bytes", "64"},
                                    {"axon.publisher_nodes", "a,b"}}};
}

const mcap::Schema kSchema{.id = 1, .name = "ns.Type", .encoding = "protobuf", .data = {1, 2, 3}};

std::string reason_of(const std::variant<ReplayType, SkipReason>& result) {
  const auto* reason = std::get_if<SkipReason>(&result);
  return reason == nullptr ? "<replayed>" : reason->text;
}

TEST(ReplayChannels, RecordedMetadataIsTheDeclaredType) {
  const auto sut = replay_type_of(recorded_channel("protobuf", "protobuf"), &kSchema);

  ASSERT_TRUE(std::holds_alternative<ReplayType>(sut)) << reason_of(sut);
  const ReplayType& type = std::get<ReplayType>(sut);
  EXPECT_TRUE(type.recorded_by_axon);
  EXPECT_EQ(type.declared.type.name, "ns.Type");
  EXPECT_EQ(type.declared.type.hash, 0xdeadbeefULL);
  EXPECT_EQ(type.declared.type.serializer, "protobuf");
  EXPECT_EQ(type.declared.type.size, 32U);
  EXPECT_EQ(type.declared.type.align, 8U);
  EXPECT_EQ(type.declared.type.version, 3U);
  EXPECT_EQ(type.declared.max_payload_bytes, 64U);
  ASSERT_EQ(type.declared.schema.size(), 3U);
  EXPECT_EQ(type.declared.schema[2], std::byte{3});
}

TEST(ReplayChannels, RawChannelNeedsNoSchema) {
  const auto sut = replay_type_of(recorded_channel("raw", "axon.raw"), nullptr);

  ASSERT_TRUE(std::holds_alternative<ReplayType>(sut)) << reason_of(sut);
  EXPECT_TRUE(std::get<ReplayType>(sut).declared.schema.empty());
}

TEST(ReplayChannels, BadOrMissingMetadataIsSkippedNamingTheKey) {
  mcap::Channel bad_hash = recorded_channel("raw", "axon.raw");
  bad_hash.metadata[1].second = "xyz";
  mcap::Channel missing = recorded_channel("raw", "axon.raw");
  missing.metadata.erase(missing.metadata.begin() + 3);

  EXPECT_EQ(reason_of(replay_type_of(bad_hash, nullptr)), "its metadata axon.type_hash is 'xyz', not 16 hex digits");
  EXPECT_NE(reason_of(replay_type_of(missing, nullptr)).find("no axon.type_size"), std::string::npos);
}

TEST(ReplayChannels, EncodingThatDoesNotMatchTheSerializerIsSkipped) {
  const auto sut = replay_type_of(recorded_channel("flatbuffers", "protobuf"), &kSchema);

  EXPECT_NE(reason_of(sut).find("message encoding 'protobuf' does not match serializer 'flatbuffers'"),
            std::string::npos)
      << reason_of(sut);
}

TEST(ReplayChannels, ProtobufWithoutSchemaIsSkipped) {
  EXPECT_NE(reason_of(replay_type_of(recorded_channel("protobuf", "protobuf"), nullptr)).find("no schema"),
            std::string::npos);
}

TEST(ReplayChannels, ForeignFlatBuffersChannelWithSchemaIsReplayedUnderItsSchemaName) {
  const mcap::Channel channel{.id = 2, .schema_id = 1, .topic = "x", .message_encoding = "flatbuffer", .metadata = {}};
  const mcap::Schema schema{.id = 1, .name = "ns.Table", .encoding = "flatbuffer", .data = {9, 9}};

  const auto sut = replay_type_of(channel, &schema);

  ASSERT_TRUE(std::holds_alternative<ReplayType>(sut)) << reason_of(sut);
  EXPECT_FALSE(std::get<ReplayType>(sut).recorded_by_axon);
  EXPECT_EQ(std::get<ReplayType>(sut).declared.type.name, "ns.Table");
  EXPECT_EQ(std::get<ReplayType>(sut).declared.type.serializer, "flatbuffers");
}

TEST(ReplayChannels, ForeignChannelOfAnotherEncodingIsSkipped) {
  const mcap::Channel channel{.id = 2, .schema_id = 0, .topic = "x", .message_encoding = "json", .metadata = {}};

  EXPECT_NE(reason_of(replay_type_of(channel, nullptr)).find("message encoding 'json' is not one axon play publishes"),
            std::string::npos);
}

}  // namespace
}  // namespace axon::tools
