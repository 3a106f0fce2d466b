// The schema a Protobuf topic stores: its FileDescriptorSet holds the message's file and every file it imports,
// imports first, so that a DescriptorPool built from it alone knows the message.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>

#include <string>

#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "tests/support/topic_messages.hpp"

namespace axon {
namespace {

TEST(ProtobufSchema, HoldsTheMessageFileAfterTheFilesItImports) {
  const std::vector<std::byte> sut = Serializer<schemas::pb::Heartbeat>::schema();

  google::protobuf::FileDescriptorSet set;
  ASSERT_TRUE(set.ParseFromArray(sut.data(), static_cast<int>(sut.size())));
  ASSERT_EQ(set.file_size(), 2);
  EXPECT_EQ(set.file(0).name(), "common.proto");  // heartbeat.proto imports it
  EXPECT_EQ(set.file(1).name(), "heartbeat.proto");
}

TEST(ProtobufSchema, BuildsAPoolThatKnowsTheMessageAndItsImportedFields) {
  const std::vector<std::byte> schema = Serializer<schemas::pb::Heartbeat>::schema();
  google::protobuf::FileDescriptorSet set;
  ASSERT_TRUE(set.ParseFromArray(schema.data(), static_cast<int>(schema.size())));

  google::protobuf::DescriptorPool sut;
  for (const auto& file : set.file()) {
    ASSERT_NE(sut.BuildFile(file), nullptr) << file.name();
  }
  const google::protobuf::Descriptor* heartbeat = sut.FindMessageTypeByName("axon.schemas.pb.Heartbeat");
  ASSERT_NE(heartbeat, nullptr);
  const google::protobuf::FieldDescriptor* header = heartbeat->FindFieldByName("header");
  ASSERT_NE(header, nullptr);
  EXPECT_EQ(header->message_type()->full_name(), "axon.schemas.pb.Header");
  EXPECT_NE(header->message_type()->FindFieldByName("frame_id"), nullptr);
}

TEST(FlatBuffersSchema, IsTheBinarySchemaFlatcEmbedded) {
  const std::vector<std::byte> sut = Serializer<schemas::fb::Heartbeat>::schema();

  ASSERT_EQ(sut.size(), schemas::fb::HeartbeatBinarySchema::size());
  EXPECT_EQ(std::memcmp(sut.data(), schemas::fb::HeartbeatBinarySchema::data(), sut.size()), 0);
  EXPECT_TRUE(flatbuffers::BufferHasIdentifier(sut.data(), "BFBS"));
}

TEST(RawSchema, IsEmpty) { EXPECT_TRUE(detail::schema_of<test::topics::Pose>().empty()); }

}  // namespace
}  // namespace axon
