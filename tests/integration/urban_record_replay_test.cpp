// Issue 18's round trip on the reference scenario: bench/scenarios/urban.yaml (nine processes, 13 topics,
// about 370 MB/s of camera, lidar and control traffic) runs for 10 s while `axon record --all` records it; then
// `axon play` replays the file while a second `axon record --all` records the replay. Checked:
//   - the first recording lost nothing: per topic, the recorder's own count of lost messages is 0, the publishers'
//     sequence numbers follow each other without a gap, and the topic has at least what its publisher counted
//     in the scenario's measured window (the recording also holds the warm-up);
//   - the replay published the same messages in the same order per topic: the second file holds, per topic, the
//     first file's payloads in order (CRC-32 of each);
//   - the replay's timing: each replayed message's publish stamp against the first file's log-time gap from the
//     first message (printed as p50/p99/max, not asserted: timing is measured, not tested, on a shared machine;
//     docs/performance.md, "Replay timing (issue 18)").
// Release builds only (axon-bench is not built under the sanitizers).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "src/tools/mcap/crc32.hpp"
#include "src/tools/mcap/message_cursor.hpp"
#include "src/tools/mcap/reader.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/common/temp_dir.hpp"

namespace axon::tools {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;

const std::string kAxon = AXON_CLI;
const std::string kBench = AXON_BENCH;
const std::string kUrban = AXON_URBAN_SCENARIO;
constexpr std::uint32_t kDomain = 9400;  // the tools tests' domains: 8600..9399
constexpr double kScenarioSeconds = 10;

/// One recorded message, as the checks need it.
struct Recorded {
  std::uint64_t sequence = 0;
  std::uint64_t log_time = 0;
  std::uint64_t publish_time = 0;
  std::uint32_t crc = 0;
};

/// Every message of `path`, per topic, in log-time order; a read error fails the test.
std::map<std::string, std::vector<Recorded>> read_recording(const std::string& path) {
  std::map<std::string, std::vector<Recorded>> topics;
  auto reader = mcap::Reader::open(path);
  if (!reader) {
    ADD_FAILURE() << path << ": " << reader.error().message();
    return topics;
  }
  mcap::MessageCursor cursor = (*reader)->messages();
  mcap::Message message;
  for (;;) {
    auto more = cursor.next(message);
    if (!more) {
      ADD_FAILURE() << path << ": " << more.error().message();
      return topics;
    }
    if (!*more) {
      break;
    }
    const auto& channels = (*reader)->summary().channels;
    const auto channel = std::find_if(channels.begin(), channels.end(),
                                      [&](const mcap::Channel& c) { return c.id == message.header.channel_id; });
    if (channel == channels.end()) {
      ADD_FAILURE() << path << ": a message of unknown channel " << message.header.channel_id;
      continue;
    }
    topics[channel->topic].push_back(Recorded{.sequence = message.header.sequence,
                                              .log_time = message.header.log_time,
                                              .publish_time = message.header.publish_time,
                                              .crc = mcap::crc32(message.data)});
  }
  return topics;
}

YAML::Node json_line(const std::string& output) {
  std::size_t at = 0;
  while (at < output.size()) {
    const std::size_t end = output.find('\n', at);
    const std::string line = output.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.starts_with("{")) {
      return YAML::Load(line);
    }
    if (end == std::string::npos) {
      break;
    }
    at = end + 1;
  }
  ADD_FAILURE() << "no JSON document in:\n" << output;
  return {};
}

/// Starts `axon record --all` into `path` in kDomain; `reliable`: publishers wait for it (--reliable).
ChildProcess start_recorder(const std::string& path, bool reliable = false) {
  std::vector<std::string> args{kAxon, "--domain", std::to_string(kDomain), "record", "--all", "--output",
                                path,  "--json"};
  if (reliable) {
    // A file system can hold a write back for hundreds of ms (dirty-page throttling): wait that out.
    args.insert(args.end(), {"--reliable", "--block-timeout", "5"});
  }
  return ChildProcess::spawn(args);
}

/// SIGINT, then the recorder's --json document (its exit status 0 checked).
YAML::Node stop_recorder(ChildProcess& recorder) {
  recorder.kill(SIGINT);
  EXPECT_EQ(recorder.wait(60s), 0) << recorder.output();
  return json_line(recorder.output());
}

std::uint64_t percentile(std::vector<std::int64_t> values, double p) {
  if (values.empty()) {
    return 0;
  }
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1));
  return static_cast<std::uint64_t>(std::max<std::int64_t>(values[index], 0));
}

TEST(UrbanRecordReplay, EveryMessageIsRecordedAndTheReplayRepeatsEachTopicInOrder) {
  test::TempDir dir{"axon-urban-replay"};
  const std::string recording = dir.path() + "/urban.mcap";
  const std::string replayed = dir.path() + "/replayed.mcap";
  const std::string scenario_json = dir.path() + "/scenario.json";

  // 1. The scenario, recorded.
  ChildProcess recorder = start_recorder(recording);
  std::this_thread::sleep_for(500ms);  // the recorder joins the domain before the components do
  ChildProcess scenario =
      ChildProcess::spawn({kBench, "scenario", kUrban, "--duration", std::to_string(kScenarioSeconds), "--domain",
                           std::to_string(kDomain), "--json", scenario_json, "--quiet"});
  ASSERT_EQ(scenario.wait(120s), 0) << scenario.output();
  const YAML::Node recorded_stats = stop_recorder(recorder);
  ASSERT_TRUE(recorded_stats["lost"]) << recorder.output();
  EXPECT_EQ(recorded_stats["lost"].as<std::uint64_t>(), 0U) << recorder.output();

  std::map<std::string, std::uint64_t> published;  // per topic, in the scenario's window
  for (const YAML::Node& result : YAML::LoadFile(scenario_json)["results"]) {
    if (result["topic"] && !result["topic"].IsNull()) {
      published[result["topic"].as<std::string>()] = result["published"].as<std::uint64_t>();
    }
  }
  ASSERT_EQ(published.size(), 13U) << "the urban scenario's 13 topics";

  const auto original = read_recording(recording);
  for (const auto& [topic, count] : published) {
    const auto found = original.find(topic);
    ASSERT_NE(found, original.end()) << topic << " was not recorded";
    const std::vector<Recorded>& messages = found->second;
    EXPECT_GE(messages.size(), count) << topic << ": fewer recorded than published in the measured window";
    for (std::size_t i = 1; i < messages.size(); ++i) {
      ASSERT_EQ(messages[i].sequence, messages[i - 1].sequence + 1)
          << topic << ": a gap in the publisher's sequence numbers after " << messages[i - 1].sequence;
    }
    std::printf("recorded %-28s %6zu messages, sequences %llu..%llu (window: %llu published)\n", topic.c_str(),
                messages.size(), static_cast<unsigned long long>(messages.front().sequence),
                static_cast<unsigned long long>(messages.back().sequence), static_cast<unsigned long long>(count));
  }

  // 2. The recording, replayed and recorded again.
  // Reliable: the copy's identity is checked, not whether a recorder keeps up with a replay at full speed on a
  // loaded machine (play does not wait for a best-effort subscriber; the first recording above is best effort).
  ChildProcess rerecorder = start_recorder(replayed, /*reliable=*/true);
  std::this_thread::sleep_for(500ms);
  ChildProcess play =
      ChildProcess::spawn({kAxon, "--domain", std::to_string(kDomain), "play", recording, "--delay", "2", "--json"});
  ASSERT_EQ(play.wait(120s), 0) << play.output();
  const YAML::Node play_stats = json_line(play.output());
  std::this_thread::sleep_for(500ms);  // the last messages reach the recorder's file
  const YAML::Node replayed_stats = stop_recorder(rerecorder);
  EXPECT_EQ(replayed_stats["lost"].as<std::uint64_t>(), 0U) << rerecorder.output();

  const auto copy = read_recording(replayed);
  std::vector<std::int64_t> errors_ns;
  std::uint64_t first_log = UINT64_MAX;
  for (const auto& [topic, messages] : original) {
    first_log = std::min(first_log, messages.front().log_time);
  }
  std::uint64_t first_publish = UINT64_MAX;
  for (const auto& [topic, messages] : copy) {
    first_publish = std::min(first_publish, messages.front().publish_time);
  }
  for (const auto& [topic, messages] : original) {
    const auto found = copy.find(topic);
    ASSERT_NE(found, copy.end()) << topic << " was not replayed";
    const std::vector<Recorded>& again = found->second;
    ASSERT_EQ(again.size(), messages.size()) << topic << ": replayed a different number of messages";
    for (std::size_t i = 0; i < messages.size(); ++i) {
      ASSERT_EQ(again[i].crc, messages[i].crc) << topic << ": message " << i << " differs in the replay";
      const auto intended = static_cast<std::int64_t>(messages[i].log_time - first_log);
      const auto actual = static_cast<std::int64_t>(again[i].publish_time - first_publish);
      errors_ns.push_back(actual - intended);
    }
  }
  std::printf(
      "replay timing (publish stamp - recorded gap), %zu messages: p50 %.1f us, p99 %.1f us, max %.1f us; "
      "play's own (publish - deadline): p50 %.1f us, p99 %.1f us\n",
      errors_ns.size(), static_cast<double>(percentile(errors_ns, 0.5)) / 1e3,
      static_cast<double>(percentile(errors_ns, 0.99)) / 1e3, static_cast<double>(percentile(errors_ns, 1.0)) / 1e3,
      play_stats["timing"]["p50_ns"].as<double>() / 1e3, play_stats["timing"]["p99_ns"].as<double>() / 1e3);
}

}  // namespace
}  // namespace axon::tools
