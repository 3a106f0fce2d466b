// The pieces of `axon record` under its loop: which topics a selection takes, the names of split files, and how a
// topic maps to an MCAP schema and channel (docs/design/mcap.md, "Topics in MCAP files").
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "src/tools/axon/record/channel_mapping.hpp"
#include "src/tools/axon/record/recorder.hpp"
#include "src/tools/axon/record/recording_files.hpp"
#include "src/tools/axon/record/topic_selection.hpp"

namespace axon::tools {
namespace {

TEST(TopicSelection, TakesNamesGlobsAndWholeNameRegexes) {
  auto sut = TopicSelection::create({"imu", "camera/*"}, {"lidar_[0-9]+"}, false);
  ASSERT_TRUE(sut) << sut.error().message();

  EXPECT_TRUE(sut->matches("imu"));
  EXPECT_FALSE(sut->matches("imu2"));
  EXPECT_TRUE(sut->matches("camera/front"));
  EXPECT_TRUE(sut->matches("camera/front/raw"));
  EXPECT_TRUE(sut->matches("lidar_12"));
  EXPECT_FALSE(sut->matches("lidar_12/points"));  // the whole name must match
  EXPECT_FALSE(sut->matches("radar"));
  EXPECT_EQ(sut->text(), "imu, camera/*, --regex lidar_[0-9]+");
}

TEST(TopicSelection, AllTakesEverythingAndNothingSelectedIsRefused) {
  auto all = TopicSelection::create({}, {}, true);
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->matches("anything/at/all"));

  auto none = TopicSelection::create({}, {}, false);
  ASSERT_FALSE(none);
  EXPECT_NE(std::string(none.error().message()).find("--all"), std::string::npos);
  auto bad = TopicSelection::create({}, {"("}, false);
  ASSERT_FALSE(bad);
  EXPECT_NE(std::string(bad.error().message()).find("--regex '('"), std::string::npos);
}

TEST(RecordQos, AReliableRecordingSaysHowLongPublishersWaitForIt) {
  RecordOptions options;
  EXPECT_EQ(record_qos_text(options), "depth 256, drop_oldest, best_effort");
  options.reliable = true;
  options.block_timeout_s = 5;
  EXPECT_EQ(record_qos_text(options), "depth 256, keep_all, reliable, block_timeout 5 s");
}

TEST(SplitFileName, PutsTheIndexBeforeTheExtension) {
  EXPECT_EQ(split_file_name("drive.mcap", 0), "drive_0.mcap");
  EXPECT_EQ(split_file_name("/data/run.1/drive.mcap", 12), "/data/run.1/drive_12.mcap");
  EXPECT_EQ(split_file_name("/data/run.1/drive", 3), "/data/run.1/drive_3");
  EXPECT_EQ(split_file_name("/data/.hidden", 1), "/data/.hidden_1");
}

std::map<std::string, std::string> metadata_of(const ChannelDefinition& definition) {
  return {definition.metadata.begin(), definition.metadata.end()};
}

TEST(ChannelDefinition, MapsEachSerializerAsTheConventionSays) {
  TopicRecord topic;
  topic.name = "perception/objects";
  topic.type =
      TypeIdentity{.name = "pkg.Objects", .hash = 0xabc, .size = 0, .align = 0, .version = 0, .serializer = "protobuf"};
  topic.max_payload_bytes = 4096;
  topic.schema = {std::byte{1}, std::byte{2}, std::byte{3}};

  const ChannelDefinition pb = channel_definition(topic, {"planner", "tracker"}, "depth 256, drop_oldest, best_effort");
  EXPECT_EQ(pb.topic, "perception/objects");
  EXPECT_EQ(pb.schema_name, "pkg.Objects");
  EXPECT_EQ(pb.schema_encoding, "protobuf");
  EXPECT_EQ(pb.message_encoding, "protobuf");
  EXPECT_EQ(pb.schema_data, (std::vector<std::uint8_t>{1, 2, 3}));
  const auto metadata = metadata_of(pb);
  EXPECT_EQ(metadata.size(), 9U);
  EXPECT_EQ(metadata.at("axon.type_name"), "pkg.Objects");
  EXPECT_EQ(metadata.at("axon.type_hash"), "0000000000000abc");
  EXPECT_EQ(metadata.at("axon.serializer"), "protobuf");
  EXPECT_EQ(metadata.at("axon.max_payload_bytes"), "4096");
  EXPECT_EQ(metadata.at("axon.publisher_nodes"), "planner,tracker");
  EXPECT_EQ(metadata.at("axon.qos"), "depth 256, drop_oldest, best_effort");

  topic.type.serializer = "flatbuffers";
  const ChannelDefinition fb = channel_definition(topic, {}, "");
  EXPECT_EQ(fb.schema_encoding, "flatbuffer");
  EXPECT_EQ(fb.message_encoding, "flatbuffer");
  EXPECT_NE(fb.schema_key, pb.schema_key);  // another type identity: another schema

  topic.type = TypeIdentity{.name = "Pose", .hash = 7, .size = 32, .align = 8, .version = 3, .serializer = "raw"};
  topic.schema.clear();
  const ChannelDefinition raw = channel_definition(topic, {"a"}, "");
  EXPECT_EQ(raw.schema_encoding, "axon.raw");
  EXPECT_EQ(raw.message_encoding, "axon.raw");
  EXPECT_TRUE(raw.schema_data.empty());  // not described
  EXPECT_EQ(metadata_of(raw).at("axon.type_size"), "32");
  EXPECT_EQ(metadata_of(raw).at("axon.type_align"), "8");
  EXPECT_EQ(metadata_of(raw).at("axon.type_version"), "3");

  topic.type.serializer = "cereal";
  const ChannelDefinition other = channel_definition(topic, {}, "");
  EXPECT_EQ(other.schema_encoding, "");  // no schema
  EXPECT_EQ(other.message_encoding, "axon.cereal");
}

}  // namespace
}  // namespace axon::tools
