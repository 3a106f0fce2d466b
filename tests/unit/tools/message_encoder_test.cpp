// axon topic pub's encoding: FlatBuffers and Protobuf messages built from JSON with the schema a topic stores, which
// the types' own code then reads field for field; refusals for topics without a schema format or a usable schema,
// and for JSON that does not match the schema (the parser's words: line, column, field).
#include "src/tools/axon/topic/message_encoder.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "tests/support/topic_messages.hpp"

namespace axon::tools {
namespace {

template <class T>
TopicRecord record_of() {
  return TopicRecord{.name = "t", .type = type_identity_of<T>(), .schema = detail::schema_of<T>()};
}

/// `json` encoded by an encoder of T's topic (an empty vector and a test failure when refused).
template <class T>
std::vector<std::byte> encoded(const std::string& json) {
  auto sut = MessageEncoder::create(record_of<T>());
  EXPECT_TRUE(sut.ok()) << sut.error().message();
  if (!sut) {
    return {};
  }
  auto parsed = (*sut)->parse(json);
  EXPECT_TRUE(parsed.ok()) << parsed.error().message();
  std::vector<std::byte> out((*sut)->size());
  EXPECT_EQ((*sut)->write(out), out.size());
  return out;
}

std::string refusal(const TopicRecord& record, const std::string& json) {
  auto sut = MessageEncoder::create(record);
  if (!sut) {
    return "create: " + std::string(sut.error().message());
  }
  auto parsed = (*sut)->parse(json);
  return parsed ? "<accepted>" : std::string(parsed.error().message());
}

TEST(MessageEncoder, BuildsAFlatBuffersTableThatItsTypeVerifiesAndReads) {
  const auto bytes = encoded<schemas::fb::Heartbeat>(
      R"({"header": {"sequence": 1000, "stamp_ns": 1001000, "frame_id": 7}, "component": "lidar-front",
          "health": "Degraded", "cpu_percent": 12.5})");

  const schemas::fb::Heartbeat* sut = Serializer<schemas::fb::Heartbeat>::view(bytes, true);

  ASSERT_NE(sut, nullptr);  // verified as the generated code verifies it
  ASSERT_NE(sut->header(), nullptr);
  EXPECT_EQ(sut->header()->sequence(), 1000U);
  EXPECT_EQ(sut->header()->stamp_ns(), 1001000);
  EXPECT_EQ(sut->header()->frame_id(), 7U);
  EXPECT_EQ(sut->component()->str(), "lidar-front");
  EXPECT_EQ(sut->health(), schemas::fb::Health::Degraded);
  EXPECT_EQ(sut->cpu_percent(), 12.5F);
}

TEST(MessageEncoder, BuildsTheProtobufBytesItsTypeWouldSerialize) {
  const auto bytes = encoded<schemas::pb::Heartbeat>(
      R"({"header": {"sequence": "1000", "stamp_ns": 1001000, "frame_id": 7}, "component": "lidar-front",
          "health": "HEALTH_DEGRADED", "cpu_percent": 12.5})");
  schemas::pb::Heartbeat expected;
  test::topics::fill_heartbeat(expected, test::topics::kFirstSequence);

  const std::string sut(reinterpret_cast<const char*>(bytes.data()), bytes.size());

  EXPECT_EQ(sut, expected.SerializeAsString());
}

TEST(MessageEncoder, RefusesTopicsWithoutASchemaFormat) {
  const std::string raw = refusal(record_of<test::topics::Pose>(), "{}");
  EXPECT_NE(raw.find("topic pub needs a FlatBuffers or Protobuf topic; a raw struct topic"), std::string::npos) << raw;

  TopicRecord none = record_of<schemas::pb::Heartbeat>();
  none.schema.clear();
  EXPECT_NE(refusal(none, "{}").find("no schema to build its messages from"), std::string::npos);

  TopicRecord damaged = record_of<schemas::fb::Heartbeat>();
  damaged.schema.resize(damaged.schema.size() / 2);
  EXPECT_NE(refusal(damaged, "{}").find("does not verify"), std::string::npos);
}

TEST(MessageEncoder, RefusesJsonThatDoesNotMatchTheSchemaInTheParsersWords) {
  const std::string fb = refusal(record_of<schemas::fb::Heartbeat>(), "{\"component\": \"x\",\n \"cpu\": 1}");
  EXPECT_EQ(fb.rfind("line 2, column ", 0), 0U) << fb;
  EXPECT_NE(fb.find("unknown field: cpu"), std::string::npos) << fb;

  const std::string pb = refusal(record_of<schemas::pb::Heartbeat>(), R"({"header": {"frame_id": "seven"}})");
  EXPECT_NE(pb.find("header.frame_id"), std::string::npos) << pb;
}

}  // namespace
}  // namespace axon::tools
