// axon topic echo's printing: Protobuf and FlatBuffers messages as JSON from the schema a topic stores, with
// the libraries' reflection; raw structs and topics without a usable schema as hex, saying why.
#include "src/tools/axon/topic/message_printer.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "src/tools/axon/topic/json_member.hpp"
#include "tests/support/topic_messages.hpp"

namespace axon::tools {
namespace {

using test::topics::kFirstSequence;

template <class T>
TopicRecord record_of() {
  return TopicRecord{.name = "t", .type = type_identity_of<T>(), .schema = detail::schema_of<T>()};
}

std::span<const std::byte> bytes(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

std::string member(const std::string& json, const char* path) {
  auto found = json_member(json, path);
  return found ? std::string(*found) : "<missing " + std::string(path) + " in " + json + ">";
}

TEST(MessagePrinter, PrintsProtobufFieldsByTheirProtoNames) {
  schemas::pb::Heartbeat message;
  test::topics::fill_heartbeat(message, kFirstSequence);
  const MessagePrinter sut(record_of<schemas::pb::Heartbeat>());

  auto json = sut.to_json(bytes(message.SerializeAsString()));

  ASSERT_TRUE(json.ok()) << json.error().message();
  EXPECT_EQ(sut.hex_reason(), "");
  EXPECT_EQ(member(*json, "component"), "\"lidar-front\"");
  EXPECT_EQ(member(*json, "header.frame_id"), "7");
  EXPECT_EQ(member(*json, "header.sequence"), "\"1000\"");  // Protobuf's JSON: 64-bit integers as strings
  EXPECT_EQ(member(*json, "health"), "\"HEALTH_DEGRADED\"");
  EXPECT_EQ(member(*json, "cpu_percent"), "12.5");
}

TEST(MessagePrinter, PrintsFlatBuffersFieldsByTheirSchemaNames) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(test::topics::build_heartbeat(fbb, kFirstSequence));
  const std::string message(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
  const MessagePrinter sut(record_of<schemas::fb::Heartbeat>());

  auto json = sut.to_json(bytes(message));

  ASSERT_TRUE(json.ok()) << json.error().message();
  EXPECT_EQ(sut.hex_reason(), "");
  EXPECT_EQ(member(*json, "component"), "\"lidar-front\"");
  EXPECT_EQ(member(*json, "header.frame_id"), "7");
  EXPECT_EQ(member(*json, "header.sequence"), "1000");
  EXPECT_EQ(member(*json, "health"), "\"Degraded\"");
  EXPECT_EQ(member(*json, "cpu_percent"), "12.5");
}

TEST(MessagePrinter, RefusesBytesThatAreNotAMessageOfTheSchema) {
  const std::string garbage = "\xff\xff\xff\x7f not a message";
  EXPECT_EQ(MessagePrinter(record_of<schemas::fb::Heartbeat>()).to_json(bytes(garbage)).error().code(),
            ErrorCode::kMalformed);
  EXPECT_EQ(MessagePrinter(record_of<schemas::pb::Heartbeat>()).to_json(bytes(garbage)).error().code(),
            ErrorCode::kMalformed);
}

TEST(MessagePrinter, PrintsRawStructsAsHexWithTheirIdentity) {
  const test::topics::Pose pose = test::topics::pose_for(0x01020304);
  const MessagePrinter sut(record_of<test::topics::Pose>());

  auto json = sut.to_json(std::as_bytes(std::span(&pose, 1)));

  ASSERT_TRUE(json.ok());
  EXPECT_NE(sut.hex_reason().find("raw struct"), std::string::npos);
  EXPECT_EQ(member(*json, "type"), "\"axon.test.Pose\"");
  EXPECT_EQ(member(*json, "size"), "32");
  EXPECT_EQ(member(*json, "version"), "3");
  EXPECT_EQ(member(*json, "hex"),
            "\"000000000000f83f00000000000002c00000000000000000"
            "0403020100000000\"");
}

TEST(MessagePrinter, PrintsHexAndSaysWhyWithoutAStoredSchema) {
  TopicRecord record = record_of<schemas::fb::Heartbeat>();
  record.schema.clear();
  const MessagePrinter sut(record);
  EXPECT_NE(sut.hex_reason().find("without an embedded binary schema"), std::string::npos) << sut.hex_reason();
  EXPECT_EQ(member(*sut.to_json(bytes("ab")), "hex"), "\"6162\"");
}

TEST(MessagePrinter, PrintsHexWhenTheStoredSchemaIsDamaged) {
  TopicRecord fb = record_of<schemas::fb::Heartbeat>();
  fb.schema.resize(fb.schema.size() / 2);
  EXPECT_NE(MessagePrinter(fb).hex_reason().find("does not verify"), std::string::npos);

  TopicRecord pb = record_of<schemas::pb::Heartbeat>();
  pb.type.name = "axon.schemas.pb.Nope";
  EXPECT_NE(MessagePrinter(pb).hex_reason().find("has no message 'axon.schemas.pb.Nope'"), std::string::npos);

  TopicRecord problem = record_of<schemas::pb::Heartbeat>();
  problem.schema.clear();
  problem.schema_problem = "the file was damaged";
  EXPECT_EQ(MessagePrinter(problem).hex_reason(), "the file was damaged");
}

}  // namespace
}  // namespace axon::tools
