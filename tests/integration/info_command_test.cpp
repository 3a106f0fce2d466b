// `axon info FILE...` run as a process on MCAP files this test writes with axon's writer (several topics, each
// compression, a file cut short the way a killed recorder leaves it) and on a file the MCAP project's own
// TypeScript writer wrote (tests/mcap_js/check.js): its JSON parsed and checked against what was written.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "src/tools/mcap/writer.hpp"
#include "tests/support/common/run_command.hpp"
#include "tests/support/common/temp_dir.hpp"

namespace axon::tools {
namespace {

using mcap::Compression;

constexpr std::uint64_t kStartNs = 1'700'000'000'000'000'000ULL;
constexpr std::uint64_t kPeriodNs = 10'000'000;  // a message every 10 ms, channels in turn

test::CommandOutput axon_info(std::vector<std::string> args) {
  args.insert(args.begin(), {AXON_CLI, "info"});
  return test::run_command(args);
}

/// The axon.* channel metadata `axon record` writes (docs/tools.md, "axon info").
mcap::StringMap axon_metadata(const std::string& type, const std::string& serializer, const std::string& size) {
  return {{"axon.type_name", type},
          {"axon.type_hash", "00112233445566ff"},
          {"axon.serializer", serializer},
          {"axon.type_size", size},
          {"axon.type_align", "8"},
          {"axon.type_version", "3"},
          {"axon.max_payload_bytes", "4096"},
          {"axon.publisher_nodes", "lidar_driver,camera_driver"},
          {"axon.qos", "depth 16, drop_oldest"}};
}

/// What the test wrote: the file's size after each chunk (flushed every kChunkMessages messages).
struct Written {
  std::vector<std::uint64_t> chunk_ends;
  std::uint32_t chunk_count = 0;
};

constexpr std::size_t kChunkMessages = 30;

/// 300 messages round robin on /scan (flatbuffers), /pose (protobuf) and /tick (raw, no schema), 100 each,
/// 10 ms apart; a chunk every kChunkMessages messages.
Written write_file(const std::string& path, Compression compression, bool summary = true) {
  Written written;
  auto writer = mcap::Writer::create(path, {.compression = compression,
                                            .chunk_messages = 1000,
                                            .summary = summary,
                                            .profile = "axon",
                                            .library = "axon info test"});
  EXPECT_TRUE(writer.ok()) << writer.error().message();
  if (!writer.ok()) {
    return written;
  }
  const std::vector<std::uint8_t> bfbs(200, 0xb5);
  const std::vector<std::uint8_t> descriptors(120, 0x0a);
  const auto scan_schema = (*writer)->add_schema("perception.Scan", "flatbuffer", bfbs);
  const auto pose_schema = (*writer)->add_schema("nav.Pose", "protobuf", descriptors);
  const std::vector<std::uint16_t> channels = {
      *(*writer)->add_channel(*scan_schema, "/scan", "flatbuffer",
                              axon_metadata("perception.Scan", "flatbuffers", "0")),
      *(*writer)->add_channel(*pose_schema, "/pose", "protobuf", axon_metadata("nav.Pose", "protobuf", "0")),
      *(*writer)->add_channel(0, "/tick", "axon.raw", axon_metadata("demo::Tick", "raw", "16"))};
  // Every payload stays alive until close(): an uncompressed writer holds them until their chunk is written.
  std::vector<std::vector<std::uint8_t>> payloads(300, std::vector<std::uint8_t>(500));
  for (std::size_t i = 0; i < 300; ++i) {
    std::vector<std::uint8_t>& payload = payloads[i];
    for (std::size_t b = 0; b < payload.size(); ++b) {
      payload[b] = static_cast<std::uint8_t>((i + b) % 7);  // compressible
    }
    const mcap::MessageHeader header{.channel_id = channels[i % 3],
                                     .sequence = static_cast<std::uint32_t>(i),
                                     .log_time = kStartNs + i * kPeriodNs,
                                     .publish_time = kStartNs + i * kPeriodNs - 100};
    EXPECT_TRUE((*writer)->add_message(header, payload).ok());
    if ((i + 1) % kChunkMessages == 0) {
      EXPECT_TRUE((*writer)->flush().ok());
      written.chunk_ends.push_back((*writer)->bytes_written());
    }
  }
  EXPECT_TRUE((*writer)->close().ok());
  written.chunk_count = (*writer)->statistics().chunk_count;
  return written;
}

const YAML::Node* channel_named(const std::vector<YAML::Node>& channels, const std::string& topic) {
  for (const YAML::Node& channel : channels) {
    if (channel["topic"].as<std::string>() == topic) {
      return &channel;
    }
  }
  return nullptr;
}

class AxonInfo : public ::testing::TestWithParam<Compression> {
 protected:
  test::TempDir dir_{"axon-info"};
};

TEST_P(AxonInfo, DescribesEveryTopicSchemaAndTheChunksCompression) {
  const std::string path = dir_.path() + "/drive.mcap";
  const Written written = write_file(path, GetParam());
  ASSERT_EQ(written.chunk_count, 10U);

  const test::CommandOutput run = axon_info({"--json", path});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node doc = YAML::Load(run.output);
  ASSERT_EQ(doc["files"].size(), 1U) << run.output;
  const YAML::Node file = doc["files"][0];
  EXPECT_EQ(file["path"].as<std::string>(), path);
  EXPECT_EQ(file["library"].as<std::string>(), "axon info test");
  EXPECT_EQ(file["profile"].as<std::string>(), "axon");
  EXPECT_TRUE(file["has_summary"].as<bool>());
  EXPECT_TRUE(file["summary_note"].IsNull());
  EXPECT_EQ(file["message_count"].as<std::uint64_t>(), 300U);
  EXPECT_EQ(file["start_ns"].as<std::uint64_t>(), kStartNs);
  EXPECT_EQ(file["end_ns"].as<std::uint64_t>(), kStartNs + 299 * kPeriodNs);
  EXPECT_NEAR(file["duration_s"].as<double>(), 2.99, 1e-9);
  EXPECT_EQ(file["chunk_count"].as<std::uint64_t>(), 10U);

  ASSERT_EQ(file["compression"].size(), 1U) << run.output;
  const YAML::Node chunks = file["compression"][0];
  const std::string name(mcap::compression_name(GetParam()));
  EXPECT_EQ(chunks["name"].as<std::string>(), name.empty() ? "none" : name);
  EXPECT_EQ(chunks["chunks"].as<std::uint64_t>(), 10U);
  const auto compressed = chunks["compressed_bytes"].as<std::uint64_t>();
  const auto uncompressed = chunks["uncompressed_bytes"].as<std::uint64_t>();
  EXPECT_GT(uncompressed, 300U * 500U);  // every payload, plus the record prefixes
  if (GetParam() == Compression::kNone) {
    EXPECT_EQ(compressed, uncompressed);
  } else {
    EXPECT_LT(compressed, uncompressed / 4) << "the payloads repeat a 7-byte pattern";
  }

  std::vector<YAML::Node> channels(file["channels"].begin(), file["channels"].end());
  ASSERT_EQ(channels.size(), 3U) << run.output;
  for (const std::string topic : {"/scan", "/pose", "/tick"}) {
    const YAML::Node* channel = channel_named(channels, topic);
    ASSERT_NE(channel, nullptr) << topic;
    EXPECT_EQ((*channel)["message_count"].as<std::uint64_t>(), 100U) << topic;
    EXPECT_NEAR((*channel)["rate_hz"].as<double>(), 100.0 / 2.99, 1e-6) << topic;
  }
  const YAML::Node scan = *channel_named(channels, "/scan");
  EXPECT_EQ(scan["schema_name"].as<std::string>(), "perception.Scan");
  EXPECT_EQ(scan["schema_encoding"].as<std::string>(), "flatbuffer");
  EXPECT_EQ(scan["message_encoding"].as<std::string>(), "flatbuffer");
  EXPECT_EQ(scan["axon"]["type_name"].as<std::string>(), "perception.Scan");
  EXPECT_EQ(scan["axon"]["serializer"].as<std::string>(), "flatbuffers");
  EXPECT_EQ(scan["axon"]["type_hash"].as<std::string>(), "00112233445566ff");
  EXPECT_EQ(scan["axon"]["type_version"].as<std::uint64_t>(), 3U);
  EXPECT_EQ(scan["axon"]["max_payload_bytes"].as<std::uint64_t>(), 4096U);
  EXPECT_EQ(scan["axon"]["publisher_nodes"].as<std::string>(), "lidar_driver,camera_driver");
  EXPECT_EQ(scan["axon"]["qos"].as<std::string>(), "depth 16, drop_oldest");
  const YAML::Node pose = *channel_named(channels, "/pose");
  EXPECT_EQ(pose["schema_name"].as<std::string>(), "nav.Pose");
  EXPECT_EQ(pose["schema_encoding"].as<std::string>(), "protobuf");
  const YAML::Node tick = *channel_named(channels, "/tick");
  EXPECT_TRUE(tick["schema_name"].IsNull());
  EXPECT_EQ(tick["schema_id"].as<int>(), 0);
  EXPECT_EQ(tick["message_encoding"].as<std::string>(), "axon.raw");
  EXPECT_EQ(tick["axon"]["type_size"].as<std::uint64_t>(), 16U);
  EXPECT_EQ(tick["axon"]["type_align"].as<std::uint64_t>(), 8U);

  ASSERT_EQ(file["schemas"].size(), 2U);
  EXPECT_EQ(file["schemas"][0]["name"].as<std::string>(), "perception.Scan");
  EXPECT_EQ(file["schemas"][0]["data_bytes"].as<std::uint64_t>(), 200U);
  EXPECT_EQ(file["schemas"][1]["encoding"].as<std::string>(), "protobuf");
  EXPECT_EQ(file["notes"].size(), 0U) << run.output;
}

INSTANTIATE_TEST_SUITE_P(EachCompression, AxonInfo,
                         ::testing::Values(Compression::kNone, Compression::kLz4, Compression::kZstd),
                         [](const auto& info) {
                           const std::string name(mcap::compression_name(info.param));
                           return name.empty() ? std::string("none") : name;
                         });

class AxonInfoFiles : public ::testing::Test {
 protected:
  test::TempDir dir_{"axon-info"};
};

TEST_F(AxonInfoFiles, ATextSummaryNamesTheTopicsTypesAndCompression) {
  const std::string path = dir_.path() + "/drive.mcap";
  write_file(path, Compression::kZstd);

  const test::CommandOutput run = axon_info({path});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("library:     axon info test\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("summary:     yes\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("messages:    300\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("duration:    2.990 s\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("start:       2023-11-14T22:13:20.000000000Z"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("  zstd:      10 chunks"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("\n   1  /pose       100    33.44  nav.Pose         protobuf         protobuf\n"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("\n  /tick  demo::Tick       00112233445566ff  raw            16      8        3         "
                            "4096  lidar_driver,camera_driver  depth 16, drop_oldest\n"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("\n   2  nav.Pose         protobuf      120\n"), std::string::npos) << run.output;
}

TEST_F(AxonInfoFiles, AFileCutShortIsDescribedFromItsCompleteChunksAndNamesTheRecovery) {
  const std::string path = dir_.path() + "/killed.mcap";
  const Written written = write_file(path, Compression::kLz4);
  ASSERT_GE(written.chunk_ends.size(), 5U);
  // Cut inside the sixth chunk, as a recorder killed while writing it leaves the file: five complete chunks.
  std::filesystem::resize_file(path, (written.chunk_ends[4] + written.chunk_ends[5]) / 2);

  const test::CommandOutput run = axon_info({"--json", path});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node file = YAML::Load(run.output)["files"][0];
  EXPECT_FALSE(file["has_summary"].as<bool>());
  const std::string note = file["summary_note"].as<std::string>();
  EXPECT_NE(note.find("axon record --recover " + path), std::string::npos) << note;
  EXPECT_EQ(file["message_count"].as<std::uint64_t>(), 5 * kChunkMessages);
  EXPECT_EQ(file["start_ns"].as<std::uint64_t>(), kStartNs);
  EXPECT_EQ(file["end_ns"].as<std::uint64_t>(), kStartNs + (5 * kChunkMessages - 1) * kPeriodNs);
  EXPECT_EQ(file["chunk_count"].as<std::uint64_t>(), 5U);
  EXPECT_EQ(file["compression"][0]["name"].as<std::string>(), "lz4");
  ASSERT_EQ(file["channels"].size(), 3U);
  for (const YAML::Node& channel : file["channels"]) {
    EXPECT_EQ(channel["message_count"].as<std::uint64_t>(), 50U) << channel["topic"];
    EXPECT_EQ(channel["axon"]["serializer"].IsScalar(), true);
  }
  EXPECT_EQ(file["schemas"].size(), 2U);

  const test::CommandOutput text = axon_info({path});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("summary:     missing: "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("`axon record --recover " + path + "` rebuilds the summary"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("messages:    150\n"), std::string::npos) << text.output;
}

TEST_F(AxonInfoFiles, AFileWithoutSummarySectionIsCountedFromItsChunks) {
  const std::string path = dir_.path() + "/no_summary.mcap";
  write_file(path, Compression::kNone, /*summary=*/false);

  const test::CommandOutput run = axon_info({"--json", path});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node file = YAML::Load(run.output)["files"][0];
  EXPECT_FALSE(file["has_summary"].as<bool>());
  EXPECT_EQ(file["message_count"].as<std::uint64_t>(), 300U);
  EXPECT_EQ(file["chunk_count"].as<std::uint64_t>(), 10U);
}

TEST_F(AxonInfoFiles, AFileThatIsNoMcapIsAnErrorAndTheOthersAreStillDescribed) {
  const std::string bad = dir_.write("notes.txt", "not an mcap file\n");
  const std::string good = dir_.path() + "/drive.mcap";
  write_file(good, Compression::kZstd);

  const test::CommandOutput run = axon_info({"--json", bad, good});

  EXPECT_EQ(run.exit_code, 1) << run.output;
  const YAML::Node doc = YAML::Load(run.output);
  ASSERT_EQ(doc["files"].size(), 2U) << run.output;
  EXPECT_NE(doc["files"][0]["error"].as<std::string>().find("is not an MCAP file"), std::string::npos);
  EXPECT_EQ(doc["files"][1]["message_count"].as<std::uint64_t>(), 300U);

  const test::CommandOutput missing = axon_info({dir_.path() + "/absent.mcap"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("cannot open " + dir_.path() + "/absent.mcap"), std::string::npos) << missing.output;
}

TEST_F(AxonInfoFiles, DescribesAFileTheMcapProjectsTypeScriptWriterWrote) {
  ASSERT_TRUE(std::filesystem::exists(std::string(AXON_MCAP_JS_DIR) + "/node_modules/@mcap/core"))
      << "the MCAP TypeScript library is not installed: run scripts/install-deps.sh (npm ci in tests/mcap_js)";
  const std::string path = dir_.path() + "/reference.mcap";
  const test::CommandOutput wrote =
      test::run_command({AXON_NODE, std::string(AXON_MCAP_JS_DIR) + "/check.js", "write", path});
  ASSERT_EQ(wrote.exit_code, 0) << wrote.output;

  const test::CommandOutput run = axon_info({"--json", path});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node file = YAML::Load(run.output)["files"][0];
  EXPECT_EQ(file["library"].as<std::string>(), "mcap-js reference writer");
  EXPECT_TRUE(file["has_summary"].as<bool>());
  EXPECT_EQ(file["message_count"].as<std::uint64_t>(), 300U);
  // check.js: 300 messages 1 ms apart from 1700000000 s.
  EXPECT_EQ(file["start_ns"].as<std::uint64_t>(), kStartNs);
  EXPECT_EQ(file["end_ns"].as<std::uint64_t>(), kStartNs + 299'000'000ULL);
  EXPECT_EQ(file["metadata_count"].as<std::uint64_t>(), 1U);
  ASSERT_EQ(file["compression"].size(), 1U);
  EXPECT_EQ(file["compression"][0]["name"].as<std::string>(), "zstd");
  EXPECT_EQ(file["compression"][0]["chunks"].as<std::uint64_t>(), file["chunk_count"].as<std::uint64_t>());
  EXPECT_GT(file["chunk_count"].as<std::uint64_t>(), 1U) << "8 KiB chunks";
  std::vector<YAML::Node> channels(file["channels"].begin(), file["channels"].end());
  ASSERT_EQ(channels.size(), 3U) << run.output;
  const YAML::Node imu = *channel_named(channels, "/imu");
  EXPECT_EQ(imu["message_count"].as<std::uint64_t>(), 100U);
  EXPECT_EQ(imu["schema_name"].as<std::string>(), "demo.Imu");
  EXPECT_EQ(imu["schema_encoding"].as<std::string>(), "protobuf");
  EXPECT_EQ(imu["metadata"]["qos"].as<std::string>(), "reliable");
  EXPECT_TRUE(imu["axon"].IsNull()) << "no axon.* metadata";
  EXPECT_EQ(channel_named(channels, "/camera")->operator[]("schema_encoding").as<std::string>(), "flatbuffer");
  const YAML::Node raw = *channel_named(channels, "/raw");
  EXPECT_EQ(raw["message_count"].as<std::uint64_t>(), 100U);
  EXPECT_TRUE(raw["schema_name"].IsNull());
  ASSERT_EQ(file["schemas"].size(), 2U);
  EXPECT_EQ(file["schemas"][0]["data_bytes"].as<std::uint64_t>(), 120U);
}

}  // namespace
}  // namespace axon::tools
