// `axon play` as a process against typed subscriber processes, with files written as `axon record` writes them
// (tests/support/recorded_file.hpp): FlatBuffers, Protobuf and raw topics arrive field for field and in order per
// topic; two files merge in log-time order; --topics and --remap pick and rename; --rate 2 takes about half the
// time; --start and --duration pick a window; --loop replays again until Ctrl-C; channels that cannot be replayed are
// skipped with their reason; a message larger than the largest chunk class is skipped and named; play into an empty
// domain creates the topics as their recorded types, so a subscriber started afterwards takes the messages; --paused
// steps on a key.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/common/run_command.hpp"
#include "tests/support/pty_child.hpp"
#include "tests/support/recorded_file.hpp"
#include "tests/support/topic_messages.hpp"
#include "tests/support/typed_subscriber_child.hpp"

namespace axon::tools {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
using test::RecordedFile;
namespace topics = test::topics;

const std::string kAxon = AXON_CLI;
constexpr std::uint64_t kMs = 1'000'000;
/// Log times start here (a realtime stamp of 2026, as the recorder writes them).
constexpr std::uint64_t kT0 = 1'780'000'000'000'000'000ULL;

/// Each test's own domain (ctest runs the tests of this file in parallel): 8900 and up, from the test's name (the
/// topic pub tests use 8600 and up, the graph command tests 9300 and up).
std::uint32_t test_domain() {
  const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  return 8900 + static_cast<std::uint32_t>(std::hash<std::string>{}(name) % 300);
}

/// A file path of this test's own under the temporary directory.
std::string temp_file(const std::string& tag) {
  const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  return ::testing::TempDir() + "play_" + name + "_" + tag + "_" + std::to_string(::getpid()) + ".mcap";
}

/// A file removed when the test ends.
struct ScopedFile {
  explicit ScopedFile(std::string file) : path(std::move(file)) {}
  std::string path;
  ScopedFile(const ScopedFile&) = delete;
  ScopedFile& operator=(const ScopedFile&) = delete;
  ~ScopedFile() { (void)std::remove(path.c_str()); }
};

std::vector<std::string> axon_args(std::vector<std::string> args) {
  args.insert(args.begin(), {kAxon, "--domain", std::to_string(test_domain())});
  return args;
}

test::CommandOutput axon(std::vector<std::string> args) { return test::run_command(axon_args(std::move(args))); }

/// The --json document in a run's output: its line that starts with '{'.
YAML::Node json_doc(const std::string& output) {
  std::size_t at = 0;
  while (at < output.size()) {
    const std::size_t end = output.find('\n', at);
    const std::string line = output.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.starts_with("{")) {
      try {
        return YAML::Load(line);
      } catch (const YAML::Exception& error) {
        ADD_FAILURE() << "not JSON: " << error.what() << "\n" << line;
        return {};
      }
    }
    if (end == std::string::npos) {
      break;
    }
    at = end + 1;
  }
  ADD_FAILURE() << "no JSON document in:\n" << output;
  return {};
}

/// The entry of `topic` in the document's topics (an undefined node when absent).
YAML::Node topic_entry(const YAML::Node& doc, const std::string& topic) {
  for (const auto& entry : doc["topics"]) {
    if (entry["topic"].as<std::string>() == topic) {
      return entry;
    }
  }
  return {};
}

/// A node that subscribes `topic` as T (depth 256), says READY, prints each message it takes as "MSG " and
/// `describe(sample)`, and exits 0 after `count` messages (2 when they did not come within 30 s; with 0, it runs
/// until SIGTERM and exits 0), printing "DONE rejected=N" before.
template <class T>
ChildProcess subscriber_child(std::string topic, std::uint64_t count,
                              std::function<std::string(const Sample<T>&)> describe) {
  return test::typed_subscriber_child<T>(
      {.domain = test_domain(), .node_name = "play_test_subscriber", .depth = 256, .give_up = 30s, .poll = 1ms},
      std::move(topic), count, std::move(describe));
}

std::string describe_fb(const Sample<schemas::fb::Heartbeat>& s) {
  const schemas::fb::Heartbeat& m = *s;
  const schemas::fb::Header none(0, 0, 0);
  const schemas::fb::Header& header = m.header() != nullptr ? *m.header() : none;
  char line[256];
  std::snprintf(line, sizeof(line), "seq=%llu stamp=%lld frame=%u component=%s health=%d cpu=%.3f",
                static_cast<unsigned long long>(header.sequence()), static_cast<long long>(header.stamp_ns()),
                header.frame_id(), m.component() != nullptr ? m.component()->c_str() : "<none>",
                static_cast<int>(m.health()), static_cast<double>(m.cpu_percent()));
  return line;
}

std::string describe_pb(const Sample<schemas::pb::Heartbeat>& s) {
  const schemas::pb::Heartbeat& m = *s;
  char line[256];
  std::snprintf(line, sizeof(line), "seq=%llu stamp=%lld frame=%u component=%s health=%d cpu=%.3f",
                static_cast<unsigned long long>(m.header().sequence()), static_cast<long long>(m.header().stamp_ns()),
                m.header().frame_id(), m.component().c_str(), static_cast<int>(m.health()),
                static_cast<double>(m.cpu_percent()));
  return line;
}

std::string describe_pose(const Sample<topics::Pose>& s) {
  char line[128];
  std::snprintf(line, sizeof(line), "seq=%u x=%.2f y=%.2f z=%.2f", s->sequence, s->x, s->y, s->z);
  return line;
}

/// What describe_fb/pb print for the Heartbeat of `sequence` (topic_messages.hpp's values).
std::string expected_heartbeat(std::uint64_t sequence, int health) {
  char line[256];
  std::snprintf(line, sizeof(line), "seq=%llu stamp=%lld frame=%u component=%s health=%d cpu=%.3f",
                static_cast<unsigned long long>(sequence), static_cast<long long>(topics::stamp_for(sequence)),
                topics::kFrameId, std::string(topics::kComponent).c_str(), health,
                static_cast<double>(topics::kCpuPercent));
  return line;
}

std::string expected_pose(std::uint64_t sequence) {
  const topics::Pose pose = topics::pose_for(sequence);
  char line[128];
  std::snprintf(line, sizeof(line), "seq=%u x=%.2f y=%.2f z=%.2f", pose.sequence, pose.x, pose.y, pose.z);
  return line;
}

std::vector<std::uint8_t> fb_heartbeat(std::uint64_t sequence) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(topics::build_heartbeat(fbb, sequence));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::string pb_heartbeat(std::uint64_t sequence) {
  schemas::pb::Heartbeat message;
  topics::fill_heartbeat(message, sequence);
  return message.SerializeAsString();
}

/// Reads the next `count` MSG lines of `child` and checks them against expected(i) in order.
void expect_messages(ChildProcess& child, std::uint64_t count,
                     const std::function<std::string(std::uint64_t)>& expected) {
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto line = child.wait_for_line("MSG ", 30s);
    ASSERT_TRUE(line) << "message " << i << " of " << count << ":\n" << child.output();
    EXPECT_EQ(line->substr(4), expected(i)) << "message " << i;
  }
}

/// Writes `count` Pose messages on `topic`, sequences first, first + step, ..., at log time kT0 + seq ms.
void add_poses(RecordedFile& file, const std::string& topic, std::uint64_t first, std::uint64_t step,
               std::uint64_t count) {
  const std::uint16_t channel = file.add_topic(test::recorded_topic<topics::Pose>(topic));
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t seq = first + i * step;
    const topics::Pose pose = topics::pose_for(seq);
    file.add(channel, kT0 + seq * kMs, &pose, sizeof(pose));
  }
}

/// Waits (10 s at most) until `axon topic list` shows `topic` in the test's domain.
bool wait_for_topic(const std::string& topic) {
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < give_up) {
    if (axon({"topic", "list"}).output.find(topic) != std::string::npos) {
      return true;
    }
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

TEST(Play, TypedSubscribersTakeFlatBuffersProtobufAndRawMessagesFieldForFieldInOrder) {
  constexpr std::uint64_t kCount = 30;
  const ScopedFile path_file{temp_file("three")};
  const std::string& path = path_file.path;
  {
    RecordedFile file(path);
    const auto fb = file.add_topic(test::recorded_topic<schemas::fb::Heartbeat>("rec/heartbeat_fb"));
    const auto pb = file.add_topic(test::recorded_topic<schemas::pb::Heartbeat>("rec/heartbeat_pb"));
    const auto raw = file.add_topic(test::recorded_topic<topics::Pose>("rec/pose"));
    for (std::uint64_t i = 0; i < kCount; ++i) {  // interleaved, 1 ms apart
      const std::uint64_t seq = topics::kFirstSequence + i;
      const topics::Pose pose = topics::pose_for(seq);
      file.add(fb, kT0 + (3 * i) * kMs, fb_heartbeat(seq));
      file.add(pb, kT0 + (3 * i + 1) * kMs, pb_heartbeat(seq));
      file.add(raw, kT0 + (3 * i + 2) * kMs, &pose, sizeof(pose));
    }
    file.close();
  }
  ChildProcess fb_sub = subscriber_child<schemas::fb::Heartbeat>("rec/heartbeat_fb", kCount, describe_fb);
  ChildProcess pb_sub = subscriber_child<schemas::pb::Heartbeat>("rec/heartbeat_pb", kCount, describe_pb);
  ChildProcess raw_sub = subscriber_child<topics::Pose>("rec/pose", kCount, describe_pose);
  for (ChildProcess* sub : {&fb_sub, &pb_sub, &raw_sub}) {
    ASSERT_TRUE(sub->wait_for_line("READY", 20s)) << sub->output();
  }

  const auto run = axon({"play", path, "--json"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  expect_messages(fb_sub, kCount, [](std::uint64_t i) {
    return expected_heartbeat(topics::kFirstSequence + i, static_cast<int>(schemas::fb::Health::Degraded));
  });
  expect_messages(pb_sub, kCount, [](std::uint64_t i) {
    return expected_heartbeat(topics::kFirstSequence + i, schemas::pb::HEALTH_DEGRADED);
  });
  expect_messages(raw_sub, kCount, [](std::uint64_t i) { return expected_pose(topics::kFirstSequence + i); });
  for (ChildProcess* sub : {&fb_sub, &pb_sub, &raw_sub}) {
    EXPECT_EQ(sub->wait(20s), 0) << sub->output();
    EXPECT_NE(sub->output().find("DONE rejected=0"), std::string::npos) << sub->output();
  }
  const YAML::Node doc = json_doc(run.output);
  for (const char* topic : {"rec/heartbeat_fb", "rec/heartbeat_pb", "rec/pose"}) {
    const YAML::Node entry = topic_entry(doc, topic);
    ASSERT_TRUE(entry.IsDefined()) << topic << "\n" << run.output;
    EXPECT_EQ(entry["published"].as<std::uint64_t>(), kCount) << topic;
    EXPECT_EQ(entry["delivered"].as<std::uint64_t>(), kCount) << topic;
  }
  EXPECT_EQ(doc["published"].as<std::uint64_t>(), 3 * kCount);
  EXPECT_EQ(doc["skipped_channels"].size(), 0U);
  EXPECT_EQ(doc["timing"]["samples"].as<std::uint64_t>(), 3 * kCount);
  EXPECT_EQ(test::domain_files(test_domain()), std::vector<std::string>{});
}

TEST(Play, TwoFilesAreMergedInLogTimeOrder) {
  constexpr std::uint64_t kCount = 40;
  const ScopedFile even_file{temp_file("even")};
  const std::string& even = even_file.path;
  const ScopedFile odd_file{temp_file("odd")};
  const std::string& odd = odd_file.path;
  {
    RecordedFile file(even);
    add_poses(file, "rec/pose", 0, 2, kCount / 2);
    file.close();
  }
  {
    RecordedFile file(odd);
    add_poses(file, "rec/pose", 1, 2, kCount / 2);
    file.close();
  }
  ChildProcess sub = subscriber_child<topics::Pose>("rec/pose", kCount, describe_pose);
  ASSERT_TRUE(sub.wait_for_line("READY", 20s)) << sub.output();

  const auto run = axon({"play", odd, even, "--rate", "4", "--json"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  expect_messages(sub, kCount, [](std::uint64_t i) { return expected_pose(i); });
  EXPECT_EQ(sub.wait(20s), 0) << sub.output();
  const YAML::Node doc = json_doc(run.output);
  EXPECT_EQ(doc["files"].size(), 2U);
  ASSERT_EQ(doc["topics"].size(), 1U) << run.output;  // one publisher for the topic of both files
  EXPECT_EQ(doc["topics"][0]["published"].as<std::uint64_t>(), kCount);
}

TEST(Play, TopicsPicksAndRemapRenames) {
  constexpr std::uint64_t kCount = 10;
  const ScopedFile path_file{temp_file("pick")};
  const std::string& path = path_file.path;
  {
    RecordedFile file(path);
    add_poses(file, "rec/pose", 0, 1, kCount);
    const auto fb = file.add_topic(test::recorded_topic<schemas::fb::Heartbeat>("rec/heartbeat_fb"));
    for (std::uint64_t i = 0; i < kCount; ++i) {
      file.add(fb, kT0 + i * kMs, fb_heartbeat(i));
    }
    file.close();
  }
  ChildProcess sub = subscriber_child<topics::Pose>("sim/pose", kCount, describe_pose);
  ASSERT_TRUE(sub.wait_for_line("READY", 20s)) << sub.output();

  const auto run = axon({"play", path, "--topics", "rec/pose", "--remap", "rec/pose:=sim/pose", "--json"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  expect_messages(sub, kCount, [](std::uint64_t i) { return expected_pose(i); });
  EXPECT_EQ(sub.wait(20s), 0) << sub.output();
  const YAML::Node doc = json_doc(run.output);
  ASSERT_EQ(doc["topics"].size(), 1U) << run.output;
  EXPECT_EQ(doc["topics"][0]["topic"].as<std::string>(), "sim/pose");
  EXPECT_EQ(doc["topics"][0]["recorded_topic"].as<std::string>(), "rec/pose");  // rec/heartbeat_fb not published
}

TEST(Play, RateTwoTakesAboutHalfTheTime) {
  const ScopedFile path_file{temp_file("rate")};
  const std::string& path = path_file.path;
  {
    RecordedFile file(path);
    add_poses(file, "rec/pose", 0, 100, 11);  // 0 .. 1000 ms
    file.close();
  }

  const auto normal = axon({"play", path, "--json"});
  const auto doubled = axon({"play", path, "--rate", "2", "--json"});

  ASSERT_EQ(normal.exit_code, 0) << normal.output;
  ASSERT_EQ(doubled.exit_code, 0) << doubled.output;
  const double normal_s = json_doc(normal.output)["wall_s"].as<double>();
  const double doubled_s = json_doc(doubled.output)["wall_s"].as<double>();
  // Loose bounds: never earlier than due; later only by what a noisy shared machine adds.
  EXPECT_GE(normal_s, 0.99);
  EXPECT_LT(normal_s, 3.0);
  EXPECT_GE(doubled_s, 0.495);
  EXPECT_LT(doubled_s, normal_s * 0.8) << "rate 2 took " << doubled_s << " s, rate 1 " << normal_s << " s";
  EXPECT_EQ(json_doc(doubled.output)["topics"][0]["published"].as<int>(), 11);
}

TEST(Play, SpinKeepsTheRecordedTimingAndSaysHowItWaited) {
  const ScopedFile path_file{temp_file("spin")};
  const std::string& path = path_file.path;
  {
    RecordedFile file(path);
    add_poses(file, "rec/pose", 0, 100, 11);  // 0 .. 1000 ms
    file.close();
  }
  ChildProcess sub = subscriber_child<topics::Pose>("rec/pose", 11, describe_pose);
  ASSERT_TRUE(sub.wait_for_line("READY", 20s)) << sub.output();

  const auto spun = axon({"play", path, "--spin", "--json"});

  ASSERT_EQ(spun.exit_code, 0) << spun.output;
  expect_messages(sub, 11, [](std::uint64_t i) { return expected_pose(i * 100); });
  EXPECT_EQ(sub.wait(20s), 0) << sub.output();
  const auto slept = axon({"play", path, "--json"});
  ASSERT_EQ(slept.exit_code, 0) << slept.output;
  const YAML::Node spun_doc = json_doc(spun.output);
  EXPECT_EQ(spun_doc["timing"]["wait"].as<std::string>(), "spin");
  EXPECT_EQ(json_doc(slept.output)["timing"]["wait"].as<std::string>(), "sleep-then-spin");
  EXPECT_EQ(spun_doc["topics"][0]["published"].as<int>(), 11);
  EXPECT_EQ(spun_doc["timing"]["samples"].as<int>(), 11);
  // Never earlier than due (each message's error is >= 0); later only by what a noisy shared machine adds.
  EXPECT_GE(spun_doc["timing"]["p50_ns"].as<std::int64_t>(), 0);
  EXPECT_GE(spun_doc["wall_s"].as<double>(), 0.99);
  EXPECT_LT(spun_doc["wall_s"].as<double>(), 3.0);
}

TEST(Play, StartAndDurationSelectAWindowOfTheRecording) {
  const ScopedFile path_file{temp_file("window")};
  const std::string& path = path_file.path;
  {
    RecordedFile file(path);
    add_poses(file, "rec/pose", 0, 10, 10);  // 0, 10, ... 90 ms
    file.close();
  }
  ChildProcess sub = subscriber_child<topics::Pose>("rec/pose", 3, describe_pose);
  ASSERT_TRUE(sub.wait_for_line("READY", 20s)) << sub.output();

  const auto run = axon({"play", path, "--start", "0.025", "--duration", "0.03", "--json"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  expect_messages(sub, 3, [](std::uint64_t i) { return expected_pose(30 + 10 * i); });  // 30, 40, 50 ms
  EXPECT_EQ(sub.wait(20s), 0) << sub.output();
  EXPECT_EQ(json_doc(run.output)["published"].as<int>(), 3) << run.output;
}

// --delay: the publishers are made first, the messages wait; a subscriber that joins once the topic appears
// (as axon record does) gets the first message too. Without the delay, these five (4 ms in all) would be gone
// before a subscriber process started after the topic appeared could join.
TEST(Play, DelayLetsSubscribersThatJoinWhenTheTopicAppearsTakeTheFirstMessage) {
  const ScopedFile path_file{temp_file("delay")};
  const std::string& path = path_file.path;
  {
    RecordedFile file(path);
    add_poses(file, "rec/pose", 0, 1, 5);  // 0, 1, ... 4 ms
    file.close();
  }
  ChildProcess play = ChildProcess::spawn(axon_args({"play", path, "--delay", "3", "--json"}));
  ASSERT_TRUE(wait_for_topic("rec/pose")) << "play did not create the topic:\n" << play.output();
  ChildProcess sub = subscriber_child<topics::Pose>("rec/pose", 5, describe_pose);
  ASSERT_TRUE(sub.wait_for_line("READY", 20s)) << sub.output();

  expect_messages(sub, 5, [](std::uint64_t i) { return expected_pose(i); });
  EXPECT_EQ(sub.wait(20s), 0) << sub.output();
  EXPECT_EQ(play.wait(30s), 0) << play.output();
  EXPECT_EQ(json_doc(play.output())["published"].as<int>(), 5) << play.output();
}

TEST(Play, LoopReplaysAgainUntilCtrlC) {
  constexpr std::uint64_t kCount = 5;
  const ScopedFile path_file{temp_file("loop")};
  const std::string& path = path_file.path;
  {
    RecordedFile file(path);
    add_poses(file, "rec/pose", 0, 1, kCount);
    file.close();
  }
  ChildProcess sub = subscriber_child<topics::Pose>("rec/pose", 3 * kCount, describe_pose);
  ASSERT_TRUE(sub.wait_for_line("READY", 20s)) << sub.output();

  ChildProcess play = ChildProcess::spawn(axon_args({"play", path, "--loop", "--json"}));
  expect_messages(sub, 3 * kCount, [](std::uint64_t i) { return expected_pose(i % kCount); });
  play.kill(SIGINT);

  EXPECT_EQ(play.wait(20s), 0) << play.output();
  EXPECT_EQ(sub.wait(20s), 0) << sub.output();
  const YAML::Node doc = json_doc(play.output());
  EXPECT_GE(doc["loops"].as<int>(), 2) << play.output();
  EXPECT_TRUE(doc["interrupted"].as<bool>());
  EXPECT_GE(doc["published"].as<std::uint64_t>(), 3 * kCount);
  EXPECT_EQ(test::domain_files(test_domain()), std::vector<std::string>{});
}

TEST(Play, ChannelsThatCannotBeReplayedAreSkippedWithTheirReason) {
  const ScopedFile path_file{temp_file("foreign")};
  const std::string& path = path_file.path;
  {
    RecordedFile file(path);
    const std::string text = "std_msgs/String";
    const auto cdr = file.add_foreign_channel("ros/chatter", "cdr", "std_msgs/msg/String", "ros2msg",
                                              std::vector<std::uint8_t>(text.begin(), text.end()));
    const auto bare = file.add_foreign_channel("other/heartbeat", "protobuf", "", "", {});
    const std::uint8_t bytes[4] = {1, 2, 3, 4};
    file.add(cdr, kT0, bytes, sizeof(bytes));
    file.add(bare, kT0 + kMs, bytes, sizeof(bytes));
    add_poses(file, "rec/pose", 2, 1, 3);
    file.close();
  }

  const auto run = axon({"play", path, "--json"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node doc = json_doc(run.output);
  ASSERT_EQ(doc["skipped_channels"].size(), 2U) << run.output;
  EXPECT_EQ(doc["skipped_channels"][0]["topic"].as<std::string>(), "ros/chatter");
  EXPECT_NE(doc["skipped_channels"][0]["reason"].as<std::string>().find("message encoding 'cdr'"), std::string::npos)
      << run.output;
  EXPECT_EQ(doc["skipped_channels"][1]["topic"].as<std::string>(), "other/heartbeat");
  EXPECT_NE(doc["skipped_channels"][1]["reason"].as<std::string>().find("no schema"), std::string::npos) << run.output;
  EXPECT_EQ(doc["published"].as<int>(), 3);
  EXPECT_TRUE(doc["error"].IsNull());
  // The text says it too, naming the channel and the file.
  const auto text = axon({"play", path});
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("skipped channel 'ros/chatter' of " + path + ": message encoding 'cdr'"),
            std::string::npos)
      << text.output;
}

TEST(Play, FileWithNothingReplayableExitsOneSayingWhy) {
  const ScopedFile path_file{temp_file("nothing")};
  const std::string& path = path_file.path;
  {
    RecordedFile file(path);
    const auto cdr = file.add_foreign_channel("ros/chatter", "cdr", "", "", {});
    const std::uint8_t bytes[2] = {1, 2};
    file.add(cdr, kT0, bytes, sizeof(bytes));
    file.close();
  }

  const auto run = axon({"play", path, "--json"});

  EXPECT_EQ(run.exit_code, 1) << run.output;
  const YAML::Node doc = json_doc(run.output);
  EXPECT_EQ(doc["error"].as<std::string>(), "no channel of the files can be replayed (the skipped ones say why)");
  EXPECT_EQ(doc["skipped_channels"].size(), 1U);
  EXPECT_EQ(doc["published"].as<int>(), 0);
}

TEST(Play, MessageLargerThanTheLargestChunkClassIsSkippedAndNamed) {
  const ScopedFile path_file{temp_file("large")};
  const std::string& path = path_file.path;
  constexpr std::size_t kLarge = std::size_t{17} << 20;  // the default pool's largest class holds 16 MiB
  {
    RecordedFile file(path);
    const auto pb = file.add_topic(test::recorded_topic<schemas::pb::Heartbeat>("rec/heartbeat_pb"));
    file.add(pb, kT0, pb_heartbeat(1));
    file.add(pb, kT0 + kMs, std::vector<std::uint8_t>(kLarge, 0));
    file.add(pb, kT0 + 2 * kMs, pb_heartbeat(2));
    file.close();
  }

  const auto run = axon({"play", path, "--json"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node doc = json_doc(run.output);
  EXPECT_EQ(doc["topics"][0]["published"].as<int>(), 2);
  EXPECT_EQ(doc["topics"][0]["skipped_too_large"].as<int>(), 1);
  ASSERT_EQ(doc["problems"].size(), 1U) << run.output;
  const std::string problem = doc["problems"][0].as<std::string>();
  EXPECT_NE(problem.find("topic 'rec/heartbeat_pb': a message of " + std::to_string(kLarge) + " bytes was skipped"),
            std::string::npos)
      << problem;
}

// One replaying process stands for every recorded publisher: its pool has chunks of each channel's largest
// payload (the urban replay fell seconds behind on a default pool's four 4 MiB chunks for six cameras).
TEST(Play, ThePoolHasAClassOfEachChannelsLargestPayload) {
  const ScopedFile path_file{temp_file("pool")};
  const std::string& path = path_file.path;
  {
    RecordedFile file(path);
    auto big = test::recorded_topic<schemas::pb::Heartbeat>("rec/frames");
    big.max_payload_bytes = std::uint64_t{3} << 20U;  // a size no default class has
    const auto frames = file.add_topic(big);
    file.add(frames, kT0, pb_heartbeat(1));
    file.add(frames, kT0 + kMs, pb_heartbeat(2));
    file.close();
  }

  const auto run = axon({"play", path, "--json"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string pool = json_doc(run.output)["pool"].as<std::string>();
  EXPECT_NE(pool.find("3 MiB x "), std::string::npos) << pool;
}

TEST(Play, IntoAnEmptyDomainASubscriberStartedLaterTakesTheMessages) {
  constexpr std::uint64_t kCount = 60;  // 3 s at 20 Hz
  const ScopedFile path_file{temp_file("empty")};
  const std::string& path = path_file.path;
  {
    RecordedFile file(path);
    const auto fb = file.add_topic(test::recorded_topic<schemas::fb::Heartbeat>("rec/heartbeat_fb"));
    for (std::uint64_t i = 0; i < kCount; ++i) {
      file.add(fb, kT0 + i * 50 * kMs, fb_heartbeat(i));
    }
    file.close();
  }
  ChildProcess play = ChildProcess::spawn(axon_args({"play", path, "--json"}));
  ASSERT_TRUE(wait_for_topic("rec/heartbeat_fb")) << "play did not create the topic";

  ChildProcess sub = subscriber_child<schemas::fb::Heartbeat>("rec/heartbeat_fb", 0, describe_fb);
  ASSERT_TRUE(sub.wait_for_line("READY", 20s)) << sub.output();
  const auto first = sub.wait_for_line("MSG ", 20s);

  ASSERT_TRUE(first) << sub.output();
  EXPECT_EQ(play.wait(30s), 0) << play.output();
  std::this_thread::sleep_for(100ms);
  sub.kill(SIGTERM);
  EXPECT_EQ(sub.wait(20s), 0) << sub.output();
  // In order and whole from the first the subscriber took to the last one of the file.
  const std::string& out = sub.output();
  std::uint64_t seq = std::stoull(first->substr(first->find("seq=") + 4));
  EXPECT_EQ(first->substr(4), expected_heartbeat(seq, static_cast<int>(schemas::fb::Health::Degraded)));
  std::size_t at = out.find(*first) + first->size();
  while ((at = out.find("MSG ", at)) != std::string::npos) {
    const std::string line = out.substr(at + 4, out.find('\n', at) - at - 4);
    EXPECT_EQ(line, expected_heartbeat(++seq, static_cast<int>(schemas::fb::Health::Degraded)));
    at += 4;
  }
  EXPECT_EQ(seq, kCount - 1) << out;
  EXPECT_NE(out.find("DONE rejected=0"), std::string::npos) << out;
}

/// A camera frame of half a MiB: its pixels a pattern of its sequence number.
struct Frame {
  std::uint32_t sequence;
  std::array<std::uint8_t, (512 * 1024) - 4> pixels;
};

std::uint8_t frame_pixel(std::uint32_t sequence, std::size_t i) {
  return static_cast<std::uint8_t>((sequence * 131U) + (i * 7U));
}

// Bursts of frames due 100 µs apart, each burst 250 ms after the last: while play waits for a burst's first frame
// it copies the others into their chunks (a frame's copy, hundreds of µs for 2 MiB, would otherwise make the next
// one late), and every frame still arrives whole and in order. The bursts are far apart so that a sanitizer build
// on loaded cores, tens of ms late with each burst (30 ms apart, CI once saw none copied ahead), still has time.
TEST(Play, SpinningTheFramesOfABurstAreCopiedAheadAndArriveWholeInOrder) {
  constexpr std::uint32_t kBursts = 10;
  constexpr std::uint32_t kPerBurst = 4;
  constexpr std::uint64_t kBurstGapNs = 250 * kMs;
  constexpr std::uint32_t kCount = kBursts * kPerBurst;
  const ScopedFile path_file{temp_file("burst")};
  const std::string& path = path_file.path;
  {
    RecordedFile file(path);
    const auto frames = file.add_topic(test::recorded_topic<Frame>("rec/camera"));
    auto frame = std::make_unique<Frame>();
    for (std::uint32_t seq = 0; seq < kCount; ++seq) {
      frame->sequence = seq;
      for (std::size_t i = 0; i < frame->pixels.size(); ++i) {
        frame->pixels[i] = frame_pixel(seq, i);
      }
      const std::uint64_t at = kT0 + ((seq / kPerBurst) * kBurstGapNs) + ((seq % kPerBurst) * kMs / 10);
      file.add(frames, at, frame.get(), sizeof(Frame));
    }
    file.close();
  }
  const auto describe_frame = [](const Sample<Frame>& s) {
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < s->pixels.size(); ++i) {
      wrong += s->pixels[i] != frame_pixel(s->sequence, i) ? 1 : 0;
    }
    return "seq=" + std::to_string(s->sequence) + " wrong_pixels=" + std::to_string(wrong);
  };
  ChildProcess sub = subscriber_child<Frame>("rec/camera", kCount, describe_frame);
  ASSERT_TRUE(sub.wait_for_line("READY", 20s)) << sub.output();

  const auto run = axon({"play", path, "--spin", "--json"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  expect_messages(sub, kCount, [](std::uint64_t i) { return "seq=" + std::to_string(i) + " wrong_pixels=0"; });
  EXPECT_EQ(sub.wait(20s), 0) << sub.output();
  const YAML::Node doc = json_doc(run.output);
  const YAML::Node camera = topic_entry(doc, "rec/camera");
  ASSERT_TRUE(camera.IsDefined()) << run.output;
  EXPECT_EQ(camera["published"].as<std::uint64_t>(), kCount);
  EXPECT_EQ(camera["skipped_no_chunk"].as<std::uint64_t>(), 0U);
  // Frames 2 to 4 of the nine bursts after the first can be copied during the 250 ms waits (the first burst is due
  // as play starts, 100 µs leaves no room for a copy, and the next burst is beyond the 20 ms horizon).
  EXPECT_GT(doc["timing"]["prepared_ahead"].as<std::uint64_t>(), 0U) << run.output;
  EXPECT_LE(doc["timing"]["prepared_ahead"].as<std::uint64_t>(), std::uint64_t{(kBursts - 1) * (kPerBurst - 1)})
      << run.output;
  // Sleeping between messages, play copies each message only when it is next (see player.cpp).
  const auto slept = axon({"play", path, "--json"});
  ASSERT_EQ(slept.exit_code, 0) << slept.output;
  EXPECT_EQ(json_doc(slept.output)["timing"]["prepared_ahead"].as<std::uint64_t>(), 0U) << slept.output;
}

TEST(Play, PausedPublishesOneMessagePerStepKeyAndResumesOnSpace) {
  constexpr std::uint64_t kCount = 4;
  const ScopedFile path_file{temp_file("paused")};
  const std::string& path = path_file.path;
  {
    RecordedFile file(path);
    add_poses(file, "rec/pose", 0, 1, kCount);
    file.close();
  }
  ChildProcess sub = subscriber_child<topics::Pose>("rec/pose", kCount, describe_pose);
  ASSERT_TRUE(sub.wait_for_line("READY", 20s)) << sub.output();
  test::PtyChild play = test::PtyChild::spawn(axon_args({"play", path, "--paused"}), 100, 30);
  ASSERT_TRUE(play.read_until([](const std::string& out) { return out.find("paused") != std::string::npos; }, 20s))
      << play.output();

  play.type("s");
  const auto one = sub.wait_for_line("MSG ", 20s);
  ASSERT_TRUE(one) << sub.output();
  EXPECT_EQ(one->substr(4), expected_pose(0));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(sub.output().find("MSG " + expected_pose(1)), std::string::npos) << "published while paused";
  play.type(" ");

  expect_messages(sub, kCount - 1, [](std::uint64_t i) { return expected_pose(i + 1); });
  EXPECT_EQ(play.wait(20000ms), 0) << play.output();
  EXPECT_NE(play.output().find("replayed 4 messages"), std::string::npos) << play.output();
  EXPECT_EQ(sub.wait(20s), 0) << sub.output();
}

}  // namespace
}  // namespace axon::tools
