// `axon record` as a process against real publishers (axon_topic_publisher: a Protobuf and a FlatBuffers
// Heartbeat, a raw Pose and a described raw Odometry): every message published is in the file, per topic, with the
// schemas and channel metadata of the MCAP convention (docs/design/mcap.md); the file reads back with axon's
// reader and with the MCAP project's TypeScript library (tests/mcap_js/check.js), which also decodes the
// Protobuf messages to the fields published; none, lz4 and zstd; topics that appear after the start; a recorder
// killed with SIGKILL leaves a file that reads to its last complete chunk and that --recover completes; a full
// disk is an error that names the path and the free space.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/tools/mcap/reader.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/pty_child.hpp"
#include "tests/support/shell_run.hpp"
#include "tests/support/topic_messages.hpp"

namespace axon::tools {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
namespace topics = test::topics;

const std::string kAxon = AXON_CLI;

YAML::Node parse(const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& error) {
    ADD_FAILURE() << "not JSON: " << error.what() << "\n" << text;
    return {};
  }
}

using test::ShellRun;

ShellRun shell(const std::string& command) { return test::run_shell(command); }

ShellRun check_js(const std::string& args) {
  return shell(std::string(AXON_NODE) + " " + AXON_MCAP_JS_DIR + "/check.js " + args);
}

/// The published counts of a "PUBLISHED pb=N fb=N raw=N described=N" line, by topic suffix.
std::map<std::string, std::uint64_t> published_counts(const std::string& line, const std::string& prefix) {
  std::map<std::string, std::uint64_t> counts;
  unsigned long long pb = 0;
  unsigned long long fb = 0;
  unsigned long long raw = 0;
  unsigned long long described = 0;
  if (std::sscanf(line.c_str(), "PUBLISHED pb=%llu fb=%llu raw=%llu described=%llu", &pb, &fb, &raw, &described) == 4) {
    counts[prefix + "heartbeat_pb"] = pb;
    counts[prefix + "heartbeat_fb"] = fb;
    counts[prefix + "pose_raw"] = raw;
    counts[prefix + "odometry_raw"] = described;
  }
  return counts;
}

/// What axon's reader finds in a file: messages per topic, and the reader itself for the rest.
struct FileContents {
  std::map<std::string, std::uint64_t> counts;
  std::vector<std::pair<std::string, std::vector<std::uint8_t>>> first_payloads;  // topic, payload
  bool summary = false;
  std::string error;
};

FileContents read_file(const std::string& path) {
  FileContents out;
  auto reader = mcap::Reader::open(path);
  if (!reader) {
    out.error = std::string((reader.error().message()));
    return out;
  }
  out.summary = (*reader)->summary_used();
  std::map<std::uint16_t, std::string> topic_of;
  auto cursor = (*reader)->messages();
  mcap::Message message;
  for (;;) {
    auto more = cursor.next(message);
    if (!more) {
      out.error = std::string(more.error().message());
      return out;
    }
    if (!*more) {
      break;
    }
    for (const mcap::Channel& channel : (*reader)->summary().channels) {
      topic_of[channel.id] = channel.topic;
    }
    const std::string& topic = topic_of[message.header.channel_id];
    if (out.counts[topic]++ == 0) {
      out.first_payloads.emplace_back(topic, std::vector<std::uint8_t>(message.data.begin(), message.data.end()));
    }
  }
  return out;
}

class RecordProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("axon-record-test-" + std::to_string(::getpid()) + "-" + std::to_string(domain_));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    for (auto& publisher : publishers_) {
      publisher.kill(SIGTERM);
      EXPECT_EQ(publisher.wait(10s), 0) << publisher.output();
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  /// A publisher of the four topics under `prefix` ("a/"), `count` messages each at `rate`, once subscribed.
  ChildProcess& start_publisher(const std::string& prefix, std::uint64_t count, double rate, bool wait = true) {
    publishers_.push_back(ChildProcess::spawn(
        {AXON_TOPIC_PUBLISHER, "domain=" + std::to_string(domain_), "rate=" + std::to_string(rate),
         "count=" + std::to_string(count), "prefix=" + prefix, wait ? "wait_subscribers=1" : "wait_subscribers=0"}));
    EXPECT_TRUE(publishers_.back().wait_for_line("READY", 10s)) << publishers_.back().output();
    return publishers_.back();
  }

  /// `axon --domain D record <args> --json`, running.
  ChildProcess start_recorder(std::vector<std::string> args) const {
    args.insert(args.begin(), {kAxon, "--domain", std::to_string(domain_), "record"});
    args.emplace_back("--json");
    return ChildProcess::spawn(args);
  }

  /// Stops the recorder (SIGINT, as Ctrl-C), returns its JSON.
  static YAML::Node stop_recorder(ChildProcess& recorder) {
    recorder.kill(SIGINT);
    EXPECT_EQ(recorder.wait(30s), 0) << recorder.output();
    return parse(recorder.output());
  }

  std::uint32_t domain_ = test::unique_domain();
  std::filesystem::path dir_;
  std::deque<ChildProcess> publishers_;  // a deque: start_publisher()'s references stay valid
};

std::uint64_t recorded_count(const YAML::Node& doc, const std::string& topic) {
  for (const YAML::Node& entry : doc["topics"]) {
    if (entry["topic"].as<std::string>() == topic) {
      return entry["messages"].as<std::uint64_t>();
    }
  }
  return 0;
}

class RecordCompression : public RecordProcess, public ::testing::WithParamInterface<std::string> {};

TEST_P(RecordCompression, RecordsEveryPublishedMessageOfEachFormatReadableByBothReaders) {
  const std::string file = (dir_ / "run.mcap").string();
  ChildProcess recorder = start_recorder({"--all", "--output", file, "--compression", GetParam()});
  ChildProcess& publisher = start_publisher("rec/", 300, 1000);
  ASSERT_TRUE(publisher.wait_for_line("SUBSCRIBED", 20s)) << publisher.output();
  const auto line = publisher.wait_for_line("PUBLISHED", 20s);
  ASSERT_TRUE(line) << publisher.output();
  const auto published = published_counts(*line, "rec/");
  std::this_thread::sleep_for(500ms);  // the recorder takes what is queued

  const YAML::Node doc = stop_recorder(recorder);

  ASSERT_EQ(published.size(), 4U) << *line;
  EXPECT_EQ(doc["lost"].as<std::uint64_t>(), 0U) << recorder.output();
  EXPECT_EQ(doc["compression"].as<std::string>(), GetParam());
  for (const auto& [topic, count] : published) {
    EXPECT_EQ(count, 300U) << topic;
    EXPECT_EQ(recorded_count(doc, topic), count) << topic << "\n" << recorder.output();
  }
  // axon's reader: the same counts, through the summary.
  const FileContents contents = read_file(file);
  ASSERT_EQ(contents.error, "");
  EXPECT_TRUE(contents.summary);
  for (const auto& [topic, count] : published) {
    EXPECT_EQ(contents.counts.at(topic), count) << topic;
  }
  // The MCAP project's reader: schemas and channels by the convention, the counts, the compression.
  const ShellRun js = check_js("read " + file);
  ASSERT_EQ(js.status, 0) << js.out;
  const YAML::Node read = parse(js.out);
  EXPECT_TRUE(read["summary"].as<bool>());
  EXPECT_TRUE(read["data_crc_ok"].as<bool>()) << js.out;
  ASSERT_EQ(read["compression"].size(), 1U) << js.out;
  EXPECT_EQ(read["compression"][0].as<std::string>(), GetParam());
  std::map<std::string, std::string> schema_encoding;  // by schema name
  for (const YAML::Node& schema : read["schemas"]) {
    const auto name = schema["name"].as<std::string>();
    schema_encoding[name] = schema["encoding"].as<std::string>();
    // The stored schema: .bfbs, FileDescriptorSet, raw field description; none for the undescribed Pose.
    EXPECT_EQ(schema["size"].as<std::size_t>() > 0, name != "axon.test.Pose") << name;
  }
  EXPECT_EQ(schema_encoding["axon.schemas.pb.Heartbeat"], "protobuf");
  EXPECT_EQ(schema_encoding["axon.schemas.fb.Heartbeat"], "flatbuffer");
  EXPECT_EQ(schema_encoding["axon.test.Odometry"], "axon.raw");  // described: its field description
  std::map<std::uint64_t, std::string> topic_by_channel;
  for (const YAML::Node& channel : read["channels"]) {
    const auto topic = channel["topic"].as<std::string>();
    topic_by_channel[channel["id"].as<std::uint64_t>()] = topic;
    std::map<std::string, std::string> metadata;
    for (const YAML::Node& entry : channel["metadata"]) {
      metadata[entry[0].as<std::string>()] = entry[1].as<std::string>();
    }
    for (const char* key : {"axon.type_name", "axon.type_hash", "axon.serializer", "axon.type_size", "axon.type_align",
                            "axon.type_version", "axon.max_payload_bytes", "axon.publisher_nodes", "axon.qos"}) {
      EXPECT_EQ(metadata.count(key), 1U) << topic << " " << key;
    }
    EXPECT_EQ(metadata["axon.type_hash"].size(), 16U);
    EXPECT_EQ(metadata["axon.publisher_nodes"], "topic-publisher");
    EXPECT_EQ(metadata["axon.qos"], "depth 256, drop_oldest, best_effort");
    if (topic == "rec/pose_raw") {
      EXPECT_EQ(channel["encoding"].as<std::string>(), "axon.raw");
      EXPECT_EQ(metadata["axon.type_name"], "axon.test.Pose");
      EXPECT_EQ(metadata["axon.type_size"], "32");
      EXPECT_EQ(metadata["axon.type_version"], "3");
    }
  }
  for (const YAML::Node& count : read["counts"]) {
    const std::string& topic = topic_by_channel[count[0].as<std::uint64_t>()];
    EXPECT_EQ(count[1].as<std::uint64_t>(), published.at(topic)) << topic;
  }
  // ... and it decodes the Protobuf messages, from the recorded FileDescriptorSet, to the fields published.
  const ShellRun decoded = check_js("decode " + file + " rec/heartbeat_pb");
  ASSERT_EQ(decoded.status, 0) << decoded.out;
  const YAML::Node messages = parse(decoded.out)["messages"];
  ASSERT_EQ(messages.size(), 300U);
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const YAML::Node message = messages[i];
    const std::uint64_t sequence = topics::kFirstSequence + i;
    EXPECT_EQ(message["header"]["sequence"].as<std::uint64_t>(), sequence);
    EXPECT_EQ(message["header"]["stamp_ns"].as<std::int64_t>(), topics::stamp_for(sequence));
    EXPECT_EQ(message["header"]["frame_id"].as<std::uint32_t>(), topics::kFrameId);
    EXPECT_EQ(message["component"].as<std::string>(), topics::kComponent);
    EXPECT_EQ(message["health"].as<std::string>(), "HEALTH_DEGRADED");
    EXPECT_EQ(message["cpu_percent"].as<float>(), topics::kCpuPercent);
  }
}

INSTANTIATE_TEST_SUITE_P(Compressions, RecordCompression, ::testing::Values("none", "lz4", "zstd"));

TEST_F(RecordProcess, RecordsSelectedTopicsPresentAtStartAndThoseThatAppearLater) {
  const std::string file = (dir_ / "late.mcap").string();
  ChildProcess& early = start_publisher("early/", 100, 500);
  ChildProcess& ignored = start_publisher("other/", 0, 0, false);
  ChildProcess recorder = start_recorder({"early/*", "--regex", "late/.*", "--output", file});
  ASSERT_TRUE(early.wait_for_line("SUBSCRIBED", 20s)) << early.output();
  const auto early_line = early.wait_for_line("PUBLISHED", 20s);
  ASSERT_TRUE(early_line);
  std::this_thread::sleep_for(1s);  // the recorder has been running a while before the late topics appear
  ChildProcess& late = start_publisher("late/", 100, 500);
  ASSERT_TRUE(late.wait_for_line("SUBSCRIBED", 20s)) << late.output();
  const auto late_line = late.wait_for_line("PUBLISHED", 20s);
  ASSERT_TRUE(late_line);
  std::this_thread::sleep_for(500ms);

  const YAML::Node doc = stop_recorder(recorder);

  auto expected = published_counts(*early_line, "early/");
  expected.merge(published_counts(*late_line, "late/"));
  ASSERT_EQ(expected.size(), 8U);
  EXPECT_EQ(doc["topics"].size(), 8U) << recorder.output();  // nothing of other/
  const FileContents contents = read_file(file);
  ASSERT_EQ(contents.error, "");
  EXPECT_EQ(contents.counts.size(), 8U);
  for (const auto& [topic, count] : expected) {
    EXPECT_EQ(recorded_count(doc, topic), count) << topic;
    EXPECT_EQ(contents.counts.count(topic) ? contents.counts.at(topic) : 0, count) << topic;
  }
  (void)ignored;
}

TEST_F(RecordProcess, SplitsIntoNumberedFilesEachComplete) {
  const std::string file = (dir_ / "split.mcap").string();
  ChildProcess recorder = start_recorder({"--all", "--output", file, "--split-duration", "0.5"});
  ChildProcess& publisher = start_publisher("s/", 400, 400);
  ASSERT_TRUE(publisher.wait_for_line("SUBSCRIBED", 20s)) << publisher.output();
  const auto line = publisher.wait_for_line("PUBLISHED", 20s);
  ASSERT_TRUE(line);
  std::this_thread::sleep_for(300ms);

  const YAML::Node doc = stop_recorder(recorder);

  ASSERT_GE(doc["files"].size(), 2U) << recorder.output();
  std::map<std::string, std::uint64_t> total;
  for (std::size_t i = 0; i < doc["files"].size(); ++i) {
    const auto path = doc["files"][i].as<std::string>();
    EXPECT_EQ(path, (dir_ / ("split_" + std::to_string(i) + ".mcap")).string());
    const FileContents contents = read_file(path);
    ASSERT_EQ(contents.error, "") << path;
    EXPECT_TRUE(contents.summary) << path;
    for (const auto& [topic, count] : contents.counts) {
      total[topic] += count;
    }
  }
  for (const auto& [topic, count] : published_counts(*line, "s/")) {
    EXPECT_EQ(total[topic], count) << topic;
  }
}

TEST_F(RecordProcess, KilledRecorderLeavesAFileReadableToItsLastChunkThatRecoverCompletes) {
  const std::string file = (dir_ / "killed.mcap").string();
  const std::string recovered = (dir_ / "killed.recovered.mcap").string();
  start_publisher("k/", 0, 300, false);
  ChildProcess recorder = start_recorder({"--all", "--output", file, "--compression", "zstd"});
  std::this_thread::sleep_for(3500ms);  // several chunks (one at least every second)

  recorder.kill(SIGKILL);
  EXPECT_EQ(recorder.wait(10s), 128 + SIGKILL);

  const FileContents cut = read_file(file);
  ASSERT_EQ(cut.error, "");
  EXPECT_FALSE(cut.summary);
  std::uint64_t cut_messages = 0;
  for (const auto& [topic, count] : cut.counts) {
    cut_messages += count;
  }
  EXPECT_GE(cut_messages, 4U * 300U) << "at least two seconds of four topics in complete chunks";

  const ShellRun run = shell(kAxon + " record --recover " + file + " --json");
  ASSERT_EQ(run.status, 0) << run.out;
  const YAML::Node report = parse(run.out);
  EXPECT_EQ(report["output"].as<std::string>(), recovered);
  EXPECT_EQ(report["messages"].as<std::uint64_t>(), cut_messages);
  const FileContents whole = read_file(recovered);
  ASSERT_EQ(whole.error, "");
  EXPECT_TRUE(whole.summary);
  EXPECT_EQ(whole.counts, cut.counts);
  const ShellRun js = check_js("read " + recovered);
  ASSERT_EQ(js.status, 0) << js.out;
  EXPECT_TRUE(parse(js.out)["summary"].as<bool>());
}

TEST_F(RecordProcess, FullDiskIsAnErrorNamingThePathAndFreeSpaceAndTheFileReads) {
  const std::filesystem::path mount_point = dir_ / "small";
  std::filesystem::create_directories(mount_point);
  if (::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a 1 MiB tmpfs (needs root): " << std::strerror(errno);
  }
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{mount_point.string()};
  {
    std::ofstream filler(mount_point / "filler", std::ios::binary);
    const std::string block(768 * 1024, 'x');
    filler << block;  // about 256 KiB left
  }
  const std::string file = (mount_point / "full.mcap").string();
  start_publisher("f/", 0, 3000, false);

  const ShellRun run =
      shell(kAxon + " --domain " + std::to_string(domain_) + " record --all --duration 30 --output " + file + " 2>&1");

  EXPECT_EQ(run.status, 1) << run.out;
  EXPECT_NE(run.out.find("writing " + file + ": the disk is full ("), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(" free on its file system"), std::string::npos) << run.out;
  const FileContents contents = read_file(file);
  ASSERT_EQ(contents.error, "");
  EXPECT_FALSE(contents.summary);
  EXPECT_FALSE(contents.counts.empty()) << "the chunks written before the disk filled read";
}

TEST_F(RecordProcess, ShowsAProgressLineOnATerminalAndNoneOtherwise) {
  start_publisher("p/", 0, 200, false);
  test::PtyChild terminal = test::PtyChild::spawn(
      {kAxon, "--domain", std::to_string(domain_), "record", "--all", "--output", (dir_ / "tty.mcap").string()}, 120,
      30);
  // Refreshed once a second: two refreshes, the second with messages and a rate.
  ASSERT_TRUE(terminal.read_until(
      [](const std::string& out) {
        const auto first = out.find("\rrecording 4 topics: ");
        return first != std::string::npos && out.find("\rrecording 4 topics: ", first + 1) != std::string::npos;
      },
      15s))
      << terminal.output();
  EXPECT_NE(terminal.output().find(" msgs, "), std::string::npos);
  EXPECT_NE(terminal.output().find(" MB/s, 0 lost"), std::string::npos) << terminal.output();
  terminal.type("\x03");  // Ctrl-C
  EXPECT_EQ(terminal.wait(15s), 0) << terminal.output();
  EXPECT_NE(terminal.output().find("recorded 4 topics for "), std::string::npos) << terminal.output();

  const ShellRun piped = shell(kAxon + " --domain " + std::to_string(domain_) + " record --all --duration 2.5 -o " +
                               (dir_ / "pipe.mcap").string() + " 2>&1");
  EXPECT_EQ(piped.status, 0) << piped.out;
  EXPECT_EQ(piped.out.find("recording "), std::string::npos) << piped.out;
  EXPECT_NE(piped.out.find("stopped by duration"), std::string::npos) << piped.out;
}

TEST_F(RecordProcess, RefusesAMissingOutputAndAnEmptySelection) {
  EXPECT_EQ(shell(kAxon + " record --all 2>&1").status, 2);
  EXPECT_EQ(shell(kAxon + " record --output " + (dir_ / "x.mcap").string() + " 2>&1").status, 2);
  EXPECT_EQ(shell(kAxon + " record --regex '(' --output " + (dir_ / "x.mcap").string() + " 2>&1").status, 2);
}

}  // namespace
}  // namespace axon::tools
