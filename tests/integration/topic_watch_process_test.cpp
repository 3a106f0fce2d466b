// `axon topic echo`, `hz` and `bw` as processes against a real publisher (axon_topic_publisher: a Protobuf and a
// FlatBuffers Heartbeat, a raw Pose and a described raw Odometry at a known rate): what they print is what was
// published, the rate is the publisher's within a wide margin (the machine is shared), sizes are exact, the exit
// statuses are the documented ones, and nothing of the domain is left in /dev/shm afterwards.
#include <gtest/gtest.h>
#include <signal.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "src/tools/axon/topic/message_printer.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/topic_messages.hpp"

namespace axon::tools {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
namespace topics = test::topics;

const std::string kAxon = AXON_CLI;
constexpr double kRateHz = 50;

/// The publisher, running for the test; stopped (SIGTERM, a normal exit) at the end, after which the domain
/// must have no file left.
class TopicWatchProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    publisher_.emplace(ChildProcess::spawn(
        {AXON_TOPIC_PUBLISHER, "domain=" + std::to_string(domain_), "rate=" + std::to_string(kRateHz)}));
    ASSERT_TRUE(publisher_->wait_for_line("READY", 10s)) << publisher_->output();
  }
  void TearDown() override {
    publisher_->kill(SIGTERM);
    EXPECT_EQ(publisher_->wait(10s), 0) << publisher_->output();
    EXPECT_EQ(test::domain_files(domain_), std::vector<std::string>{});
  }

  struct Run {
    int exit_code;
    std::string output;  ///< stdout only
  };
  /// `axon --domain D <args>`, to its end (at most 30 s).
  [[nodiscard]] Run axon(std::vector<std::string> args) const {
    args.insert(args.begin(), {kAxon, "--domain", std::to_string(domain_)});
    ChildProcess run = ChildProcess::spawn(args);
    const int code = run.wait(30s);
    return {code, run.output()};
  }

  std::uint32_t domain_ = test::unique_domain();
  std::optional<ChildProcess> publisher_;
};

YAML::Node parse(const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& error) {
    ADD_FAILURE() << "not JSON: " << error.what() << "\n" << text;
    return {};
  }
}

TEST_F(TopicWatchProcess, EchoPrintsProtobufFieldsAsPublished) {
  const Run run =
      axon({"topic", "echo", std::string(topics::kProtobufTopic), "--count", "3", "--json", "--wait", "10"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node doc = parse(run.output);
  EXPECT_EQ(doc["type"].as<std::string>(), "axon.schemas.pb.Heartbeat");
  EXPECT_EQ(doc["printed_as"].as<std::string>(), "fields");
  ASSERT_EQ(doc["messages"].size(), 3U) << run.output;
  for (std::size_t i = 0; i < 3; ++i) {
    const YAML::Node entry = doc["messages"][i];
    const YAML::Node message = entry["message"];
    EXPECT_EQ(message["component"].as<std::string>(), topics::kComponent);
    EXPECT_EQ(message["header"]["frame_id"].as<std::uint32_t>(), topics::kFrameId);
    EXPECT_EQ(message["health"].as<std::string>(), "HEALTH_DEGRADED");
    EXPECT_EQ(message["cpu_percent"].as<float>(), topics::kCpuPercent);
    const auto sequence = message["header"]["sequence"].as<std::uint64_t>();
    EXPECT_GE(sequence, topics::kFirstSequence);
    EXPECT_EQ(message["header"]["stamp_ns"].as<std::int64_t>(), topics::stamp_for(sequence));
    if (i > 0) {  // one publisher, a deep queue: consecutive
      EXPECT_EQ(sequence, doc["messages"][i - 1]["message"]["header"]["sequence"].as<std::uint64_t>() + 1);
    }
    schemas::pb::Heartbeat expected;
    topics::fill_heartbeat(expected, sequence);
    EXPECT_EQ(entry["bytes"].as<std::size_t>(), expected.ByteSizeLong());
  }
}

TEST_F(TopicWatchProcess, EchoPrintsFlatBuffersFieldsAsPublished) {
  const Run run =
      axon({"topic", "echo", std::string(topics::kFlatBuffersTopic), "--count", "3", "--json", "--wait", "10"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node doc = parse(run.output);
  EXPECT_EQ(doc["type"].as<std::string>(), "axon.schemas.fb.Heartbeat");
  ASSERT_EQ(doc["messages"].size(), 3U) << run.output;
  for (const YAML::Node& entry : doc["messages"]) {
    const YAML::Node message = entry["message"];
    EXPECT_EQ(message["component"].as<std::string>(), topics::kComponent);
    EXPECT_EQ(message["header"]["frame_id"].as<std::uint32_t>(), topics::kFrameId);
    EXPECT_EQ(message["health"].as<std::string>(), "Degraded");
    EXPECT_EQ(message["cpu_percent"].as<float>(), topics::kCpuPercent);
    const auto sequence = message["header"]["sequence"].as<std::uint64_t>();
    EXPECT_EQ(message["header"]["stamp_ns"].as<std::int64_t>(), topics::stamp_for(sequence));
  }
}

TEST_F(TopicWatchProcess, EchoPrintsRawStructsAsTheirBytesInHex) {
  const Run run = axon({"topic", "echo", std::string(topics::kRawTopic), "--once", "--json", "--wait", "10"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node doc = parse(run.output);
  EXPECT_EQ(doc["printed_as"].as<std::string>(), "hex");
  ASSERT_EQ(doc["messages"].size(), 1U) << run.output;
  const YAML::Node message = doc["messages"][0]["message"];
  EXPECT_EQ(message["type"].as<std::string>(), "axon.test.Pose");
  EXPECT_EQ(message["size"].as<std::size_t>(), sizeof(topics::Pose));
  EXPECT_EQ(message["version"].as<std::uint32_t>(), 3U);
  const auto hex = message["hex"].as<std::string>();
  ASSERT_EQ(hex.size(), 2 * sizeof(topics::Pose));
  const auto sequence = static_cast<std::uint32_t>(std::stoul(hex.substr(48, 8), nullptr, 16));
  // The sequence's bytes are little-endian in the hex; the rest of the Pose is constant.
  const std::uint32_t swapped = __builtin_bswap32(sequence);
  const topics::Pose expected = topics::pose_for(swapped);
  EXPECT_EQ(hex, to_hex(std::as_bytes(std::span(&expected, 1))));
}

TEST_F(TopicWatchProcess, EchoPrintsADescribedRawStructsFieldsAsPublished) {
  const Run run =
      axon({"topic", "echo", std::string(topics::kDescribedTopic), "--count", "1", "--json", "--wait", "10"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node doc = parse(run.output);
  EXPECT_EQ(doc["type"].as<std::string>(), "axon.test.Odometry");
  EXPECT_EQ(doc["serializer"].as<std::string>(), "raw");
  EXPECT_EQ(doc["printed_as"].as<std::string>(), "fields");
  ASSERT_EQ(doc["messages"].size(), 1U) << run.output;
  const YAML::Node message = doc["messages"][0]["message"];
  const auto sequence = message["sequence"].as<std::uint64_t>();
  EXPECT_GE(sequence, topics::kFirstSequence);
  const topics::Odometry expected = topics::odometry_for(sequence);
  EXPECT_EQ(message["stamp_ns"].as<std::int64_t>(), expected.stamp_ns);
  EXPECT_EQ(message["position"]["x"].as<float>(), expected.position.x);
  EXPECT_EQ(message["position"]["y"].as<float>(), expected.position.y);
  EXPECT_EQ(message["position"]["z"].as<float>(), expected.position.z);
  ASSERT_EQ(message["velocities"].size(), 2U) << run.output;
  EXPECT_EQ(message["velocities"][1]["z"].as<float>(), expected.velocities[1].z);
  EXPECT_EQ(message["frame_id"].as<std::string>(), "base_link");
  ASSERT_EQ(message["wheel_ticks"].size(), 4U) << run.output;
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(message["wheel_ticks"][i].as<std::int16_t>(), expected.wheel_ticks[i]);
  }
  EXPECT_EQ(message["mode"].as<int>(), static_cast<int>(topics::DriveMode::kAuto));
  EXPECT_TRUE(message["moving"].as<bool>());
  EXPECT_EQ(message["battery_v"].as<double>(), expected.battery_v);
  EXPECT_FALSE(message["reserved"]) << "not described, not printed: " << run.output;
}

TEST_F(TopicWatchProcess, EchoFieldNamesADescribedRawStructsNestedField) {
  const Run run = axon({"topic", "echo", std::string(topics::kDescribedTopic), "--count", "2", "--field",
                        "velocities.1.y", "--wait", "10"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, "-1\n-1\n");
}

TEST_F(TopicWatchProcess, EchoFieldPrintsOneValuePerLine) {
  const Run run = axon({"topic", "echo", std::string(topics::kFlatBuffersTopic), "--count", "2", "--field",
                        "header.frame_id", "--wait", "10"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, "7\n7\n");
}

TEST_F(TopicWatchProcess, HzMeasuresThePublishersRate) {
  const Run run =
      axon({"topic", "hz", std::string(topics::kProtobufTopic), "--duration", "3", "--json", "--wait", "10"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node doc = parse(run.output);
  const auto rate = doc["rate_hz"].as<double>();
  // Wide: the publisher shares two cores with everything else; 0.3x .. 3x still catches a wrong unit.
  EXPECT_GT(rate, 0.3 * kRateHz) << run.output;
  EXPECT_LT(rate, 3 * kRateHz) << run.output;
  EXPECT_GE(doc["messages"].as<std::uint64_t>(), 10U) << run.output;
  EXPECT_LE(doc["period_s"]["min"].as<double>(), doc["period_s"]["mean"].as<double>());
  EXPECT_GE(doc["period_s"]["max"].as<double>(), doc["period_s"]["mean"].as<double>());
}

TEST_F(TopicWatchProcess, HzTextPrintsTheRateEverySecond) {
  const Run run = axon({"topic", "hz", std::string(topics::kRawTopic), "--duration", "2.5", "--wait", "10"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("average rate: "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("std dev: "), std::string::npos) << run.output;
}

TEST_F(TopicWatchProcess, BwReportsTheExactMessageSizes) {
  const Run raw = axon({"topic", "bw", std::string(topics::kRawTopic), "--count", "20", "--json", "--wait", "10"});
  const Run pb = axon({"topic", "bw", std::string(topics::kProtobufTopic), "--count", "20", "--json", "--wait", "10"});

  ASSERT_EQ(raw.exit_code, 0) << raw.output;
  ASSERT_EQ(pb.exit_code, 0) << pb.output;
  const YAML::Node raw_doc = parse(raw.output);
  EXPECT_EQ(raw_doc["messages"].as<std::uint64_t>(), 20U);
  EXPECT_EQ(raw_doc["bytes"].as<std::uint64_t>(), 20 * sizeof(topics::Pose));
  EXPECT_EQ(raw_doc["size_bytes"]["min"].as<std::size_t>(), sizeof(topics::Pose));
  EXPECT_EQ(raw_doc["size_bytes"]["max"].as<std::size_t>(), sizeof(topics::Pose));
  EXPECT_EQ(raw_doc["size_bytes"]["mean"].as<double>(), static_cast<double>(sizeof(topics::Pose)));
  const double raw_rate = raw_doc["bytes_per_s"].as<double>() / sizeof(topics::Pose);
  EXPECT_GT(raw_rate, 0.3 * kRateHz) << raw.output;
  EXPECT_LT(raw_rate, 3 * kRateHz) << raw.output;

  schemas::pb::Heartbeat heartbeat;  // every message of the run has this size (topic_messages.hpp)
  topics::fill_heartbeat(heartbeat, topics::kFirstSequence);
  const YAML::Node pb_doc = parse(pb.output);
  EXPECT_EQ(pb_doc["size_bytes"]["min"].as<std::size_t>(), heartbeat.ByteSizeLong());
  EXPECT_EQ(pb_doc["size_bytes"]["max"].as<std::size_t>(), heartbeat.ByteSizeLong());
}

TEST_F(TopicWatchProcess, CtrlCStopsAWatchThatRunsWithoutEnd) {
  ChildProcess echo = ChildProcess::spawn(
      {kAxon, "--domain", std::to_string(domain_), "topic", "echo", std::string(topics::kRawTopic)});
  ASSERT_TRUE(echo.wait_for_line("{", 20s)) << echo.output();

  echo.kill(SIGINT);

  EXPECT_EQ(echo.wait(20s), 0) << echo.output();  // and TearDown finds no file of its node left
}

TEST(TopicWatchQuiet, HzAndBwEndAtTheirDurationWhenNoMessageComes) {
  const std::uint32_t domain = test::unique_domain();
  ChildProcess publisher = ChildProcess::spawn({AXON_TOPIC_PUBLISHER, "domain=" + std::to_string(domain), "rate=0"});
  ASSERT_TRUE(publisher.wait_for_line("READY", 10s)) << publisher.output();

  for (const char* command : {"hz", "bw"}) {
    const auto start = std::chrono::steady_clock::now();
    ChildProcess run = ChildProcess::spawn({kAxon, "--domain", std::to_string(domain), "topic", command,
                                            std::string(topics::kRawTopic), "--duration", "1.5", "--json"});
    EXPECT_EQ(run.wait(20s), 0) << command << ": " << run.output();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << command;
    const YAML::Node doc = parse(run.output());
    EXPECT_EQ(doc["messages"].as<std::uint64_t>(), 0U) << command;
  }
  publisher.kill(SIGTERM);
  EXPECT_EQ(publisher.wait(10s), 0) << publisher.output();
  EXPECT_EQ(test::domain_files(domain), std::vector<std::string>{});
}

TEST(TopicWatchLate, EchoStartedBeforeThePublisherWaitsForIt) {
  const std::uint32_t domain = test::unique_domain();
  ChildProcess echo = ChildProcess::spawn({kAxon, "--domain", std::to_string(domain), "topic", "echo",
                                           std::string(topics::kProtobufTopic), "--once", "--field", "component"});
  // Not there yet: the tool waits (without end by default) for the first publisher.
  EXPECT_EQ(echo.wait(500ms), -1) << echo.output();

  ChildProcess publisher = ChildProcess::spawn({AXON_TOPIC_PUBLISHER, "domain=" + std::to_string(domain), "rate=50"});
  ASSERT_TRUE(publisher.wait_for_line("READY", 10s)) << publisher.output();

  EXPECT_EQ(echo.wait(20s), 0) << echo.output();
  EXPECT_EQ(echo.output(), "\"lidar-front\"\n");
  publisher.kill(SIGTERM);
  EXPECT_EQ(publisher.wait(10s), 0) << publisher.output();
  EXPECT_EQ(test::domain_files(domain), std::vector<std::string>{});
}

TEST(TopicWatchCrash, SchemaFilesOfAKilledPublisherGoWhenItIsReclaimed) {
  const std::uint32_t domain = test::unique_domain();
  // A node that stays: it reclaims the killed publisher, and keeps the domain alive meanwhile.
  ChildProcess witness = ChildProcess::spawn({test::peer_path(), "node", "domain=" + std::to_string(domain)});
  ASSERT_TRUE(witness.wait_for_line("READY", 10s)) << witness.output();
  ChildProcess publisher = ChildProcess::spawn({AXON_TOPIC_PUBLISHER, "domain=" + std::to_string(domain), "rate=50"});
  ASSERT_TRUE(publisher.wait_for_line("READY", 10s)) << publisher.output();
  auto schema_files = [&] {
    std::size_t count = 0;
    for (const std::string& file : test::domain_files(domain)) {
      count += file.ends_with(".schema") ? 1 : 0;
    }
    return count;
  };
  // The Protobuf, FlatBuffers and described raw topics stored theirs; the undescribed raw one has none.
  ASSERT_EQ(schema_files(), 3U);

  publisher.kill(SIGKILL);
  ASSERT_EQ(publisher.wait(10s), 128 + SIGKILL);

  // The witness's liveness round frees the dead publisher's topics, their schema files with them.
  EXPECT_TRUE(test::eventually([&] { return schema_files() == 0; }, 20s))
      << "the dead publisher's topics still have schema files";

  // The witness dies too; the tool reclaims it when it joins, waits in vain and leaves last: nothing stays.
  witness.kill(SIGKILL);
  ASSERT_EQ(witness.wait(10s), 128 + SIGKILL);
  ChildProcess hz = ChildProcess::spawn(
      {kAxon, "--domain", std::to_string(domain), "topic", "hz", std::string(topics::kProtobufTopic), "--wait", "0.2"});
  EXPECT_EQ(hz.wait(20s), 1) << hz.output();
  EXPECT_EQ(test::domain_files(domain), std::vector<std::string>{});
}

TEST(TopicWatchUsage, TopicWithoutPublisherExitsOneAfterTheWait) {
  const std::uint32_t domain = test::unique_domain();
  ChildProcess run = ChildProcess::spawn(
      {kAxon, "--domain", std::to_string(domain), "topic", "echo", "watch/nobody", "--wait", "0.3"});
  EXPECT_EQ(run.wait(20s), 1) << run.output();
  EXPECT_EQ(test::domain_files(domain), std::vector<std::string>{});
}

TEST(TopicWatchUsage, MissingTopicOrBadOptionIsAUsageError) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{kAxon, "topic", "hz"},
                                               {kAxon, "topic", "bw", "t", "--count", "0"},
                                               {kAxon, "topic", "echo", "t", "--duration", "soon"}}) {
    ChildProcess run = ChildProcess::spawn(args);
    EXPECT_EQ(run.wait(20s), 2) << args.back();
  }
}

}  // namespace
}  // namespace axon::tools
