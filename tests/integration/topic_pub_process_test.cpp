// `axon topic pub` as a process against typed subscriber processes: a FlatBuffers and a Protobuf subscriber (with
// no publisher of their topic anywhere: the schema is the one the subscriber stored) take the message the tool
// built from JSON, field for field; --rate publishes the asked count at that rate (checked by the messages'
// own publish times); refusals (no such topic, a raw struct topic, JSON that does not match the schema, a
// message larger than the topic's chunks) exit with status 1 and say why.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/common/run_command.hpp"
#include "tests/support/topic_messages.hpp"
#include "tests/support/typed_subscriber_child.hpp"

namespace axon::tools {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
namespace topics = test::topics;

const std::string kAxon = AXON_CLI;
constexpr const char* kFbTopic = "pub/heartbeat_fb";
constexpr const char* kPbTopic = "pub/heartbeat_pb";
constexpr const char* kRawTopic = "pub/pose_raw";

/// Each test's own domain (ctest runs the tests of this file in parallel, each in its own process): 8600 and up,
/// from the test's name (the graph command tests use 9300 and up; unique_domain() numbers start far above).
std::uint32_t test_domain() {
  const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  return 8600 + static_cast<std::uint32_t>(std::hash<std::string>{}(name) % 300);
}

test::CommandOutput axon(std::vector<std::string> args) {
  args.insert(args.begin(), {kAxon, "--domain", std::to_string(test_domain())});
  return test::run_command(args);
}

YAML::Node parse(const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& error) {
    ADD_FAILURE() << "not JSON: " << error.what() << "\n" << text;
    return {};
  }
}

/// The --json document in a run's output (stdout and stderr interleaved): its line that starts with '{'.
YAML::Node json_doc(const std::string& output) {
  std::size_t at = 0;
  while (at < output.size()) {
    const std::size_t end = output.find('\n', at);
    const std::string line = output.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.starts_with("{")) {
      return parse(line);
    }
    if (end == std::string::npos) {
      break;
    }
    at = end + 1;
  }
  ADD_FAILURE() << "no JSON document in:\n" << output;
  return {};
}

/// Ends a child that runs until stopped: SIGTERM, then its exit status (0: it left the domain as usual).
int stop(ChildProcess& child) {
  child.kill(SIGTERM);
  return child.wait(20s);
}

/// A node that subscribes `topic` as T (depth 64) and nothing else, says READY, prints each message it takes as
/// `describe(sample)` on a line of its own starting with "MSG ", and exits 0 after `count` messages (2 when
/// they did not come within 20 s). 0 messages: it runs until SIGTERM, then exits 0.
template <class T>
ChildProcess subscriber_child(const char* topic, std::uint64_t count,
                              std::function<std::string(const Sample<T>&)> describe) {
  return test::typed_subscriber_child<T>({.domain = test_domain(), .node_name = "pub_test_subscriber"}, topic, count,
                                         std::move(describe));
}

std::string describe_fb(const Sample<schemas::fb::Heartbeat>& s) {
  const schemas::fb::Heartbeat& m = *s;
  const schemas::fb::Header none(0, 0, 0);  // a table may leave its header out
  const schemas::fb::Header& header = m.header() != nullptr ? *m.header() : none;
  char line[256];
  std::snprintf(line, sizeof(line), "seq=%llu stamp=%lld frame=%u component=%s health=%d cpu=%.3f t=%lld",
                static_cast<unsigned long long>(header.sequence()), static_cast<long long>(header.stamp_ns()),
                header.frame_id(), m.component() != nullptr ? m.component()->c_str() : "<none>",
                static_cast<int>(m.health()), static_cast<double>(m.cpu_percent()),
                static_cast<long long>(s.info().publish_time_ns));
  return line;
}

std::string describe_pb(const Sample<schemas::pb::Heartbeat>& s) {
  const schemas::pb::Heartbeat& m = *s;
  char line[256];
  std::snprintf(line, sizeof(line), "seq=%llu stamp=%lld frame=%u component=%s health=%d cpu=%.3f t=%lld",
                static_cast<unsigned long long>(m.header().sequence()), static_cast<long long>(m.header().stamp_ns()),
                m.header().frame_id(), m.component().c_str(), static_cast<int>(m.health()),
                static_cast<double>(m.cpu_percent()), static_cast<long long>(s.info().publish_time_ns));
  return line;
}

/// "seq=42 ... t=123" without its publish time (the part after " t=").
std::string fields_of(const std::string& msg_line) { return msg_line.substr(0, msg_line.find(" t=")); }
long long publish_time_of(const std::string& msg_line) { return std::stoll(msg_line.substr(msg_line.find(" t=") + 3)); }

TEST(TopicPub, FlatBuffersSubscriberTakesTheMessageFieldForField) {
  ChildProcess sub = subscriber_child<schemas::fb::Heartbeat>(kFbTopic, 1, describe_fb);
  ASSERT_TRUE(sub.wait_for_line("READY", 20s)) << sub.output();

  const auto run = axon({"topic", "pub", kFbTopic,
                         R"({"header": {"sequence": 42, "stamp_ns": -5, "frame_id": 9}, "component": "pub-test",
                             "health": "Failed", "cpu_percent": 33.25})",
                         "--json"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto msg = sub.wait_for_line("MSG ", 20s);
  ASSERT_TRUE(msg) << sub.output();
  EXPECT_EQ(fields_of(msg->substr(4)), "seq=42 stamp=-5 frame=9 component=pub-test health=2 cpu=33.250");
  EXPECT_EQ(sub.wait(20s), 0) << sub.output();
  EXPECT_NE(sub.output().find("DONE rejected=0"), std::string::npos) << sub.output();
  const YAML::Node doc = json_doc(run.output);
  EXPECT_EQ(doc["topic"].as<std::string>(), kFbTopic);
  EXPECT_EQ(doc["type"].as<std::string>(), "axon.schemas.fb.Heartbeat");
  EXPECT_EQ(doc["serializer"].as<std::string>(), "flatbuffers");
  EXPECT_EQ(doc["published"].as<std::uint64_t>(), 1U);
  EXPECT_EQ(doc["delivered"].as<std::uint64_t>(), 1U);
  EXPECT_EQ(doc["refusals"].size(), 0U);
  EXPECT_EQ(test::domain_files(test_domain()), std::vector<std::string>{});  // the tool left nothing either
}

TEST(TopicPub, ProtobufSubscriberTakesTheMessageFieldForField) {
  ChildProcess sub = subscriber_child<schemas::pb::Heartbeat>(kPbTopic, 1, describe_pb);
  ASSERT_TRUE(sub.wait_for_line("READY", 20s)) << sub.output();

  // Protobuf's JSON: 64-bit integers as strings or numbers, enums by name, lowerCamelCase names too.
  const auto run = axon({"topic", "pub", kPbTopic,
                         R"({"header": {"sequence": "42", "stampNs": -5, "frame_id": 9}, "component": "pub-test",
                             "health": "HEALTH_FAILED", "cpu_percent": 33.25})",
                         "--json"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto msg = sub.wait_for_line("MSG ", 20s);
  ASSERT_TRUE(msg) << sub.output();
  EXPECT_EQ(fields_of(msg->substr(4)), "seq=42 stamp=-5 frame=9 component=pub-test health=" +
                                           std::to_string(schemas::pb::HEALTH_FAILED) + " cpu=33.250");
  EXPECT_EQ(sub.wait(20s), 0) << sub.output();
  EXPECT_NE(sub.output().find("DONE rejected=0"), std::string::npos) << sub.output();
  const YAML::Node doc = json_doc(run.output);
  EXPECT_EQ(doc["type"].as<std::string>(), "axon.schemas.pb.Heartbeat");
  EXPECT_EQ(doc["serializer"].as<std::string>(), "protobuf");
  EXPECT_EQ(doc["published"].as<std::uint64_t>(), 1U);
  EXPECT_EQ(doc["delivered"].as<std::uint64_t>(), 1U);
  schemas::pb::Heartbeat expected;  // the size the subscriber's own type gives the same message
  expected.mutable_header()->set_sequence(42);
  expected.mutable_header()->set_stamp_ns(-5);
  expected.mutable_header()->set_frame_id(9);
  expected.set_component("pub-test");
  expected.set_health(schemas::pb::HEALTH_FAILED);
  expected.set_cpu_percent(33.25F);
  EXPECT_EQ(doc["bytes"].as<std::size_t>(), expected.ByteSizeLong());
  EXPECT_EQ(test::domain_files(test_domain()), std::vector<std::string>{});
}

TEST(TopicPub, RatePublishesTheCountAtThatRate) {
  constexpr int kCount = 20;
  constexpr double kRateHz = 50;
  ChildProcess sub = subscriber_child<schemas::fb::Heartbeat>(kFbTopic, kCount, describe_fb);
  ASSERT_TRUE(sub.wait_for_line("READY", 20s)) << sub.output();

  const auto run =
      axon({"topic", "pub", kFbTopic, R"({"component": "tick"})", "--rate", "50", "--count", "20", "--json"});

  ASSERT_EQ(run.exit_code, 0) << run.output;
  const YAML::Node doc = json_doc(run.output);
  EXPECT_EQ(doc["published"].as<int>(), kCount);
  std::vector<long long> times;
  for (int i = 0; i < kCount; ++i) {
    const auto msg = sub.wait_for_line("MSG ", 20s);
    ASSERT_TRUE(msg) << "message " << i << " of " << kCount << ":\n" << sub.output();
    EXPECT_NE(msg->find("component=tick"), std::string::npos) << *msg;
    times.push_back(publish_time_of(msg->substr(4)));
  }
  EXPECT_EQ(sub.wait(20s), 0) << sub.output();
  // 19 periods at least between the first and the last (the tool sleeps until each is due, never less); no
  // upper bound: the machine is shared.
  const double span_s = static_cast<double>(times.back() - times.front()) / 1e9;
  EXPECT_GE(span_s, 0.98 * (kCount - 1) / kRateHz) << run.output;
  EXPECT_EQ(test::domain_files(test_domain()), std::vector<std::string>{});
}

TEST(TopicPub, UnknownTopicIsRefusedSayingWhatToDo) {
  const auto run = axon({"topic", "pub", "pub/nobody", "{}", "--json"});

  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("topic 'pub/nobody' does not exist in domain " + std::to_string(test_domain())),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("needs a publisher or a typed subscriber of it running"), std::string::npos) << run.output;
  const YAML::Node doc = json_doc(run.output);
  EXPECT_EQ(doc["published"].as<int>(), 0);
  ASSERT_EQ(doc["refusals"].size(), 1U);
  EXPECT_TRUE(doc["type"].IsNull());
}

TEST(TopicPub, RawStructTopicIsRefused) {
  ChildProcess sub = subscriber_child<topics::Pose>(kRawTopic, 0, [](const Sample<topics::Pose>&) { return ""; });
  ASSERT_TRUE(sub.wait_for_line("READY", 20s)) << sub.output();

  const auto run = axon({"topic", "pub", kRawTopic, R"({"x": 1})"});

  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("topic pub needs a FlatBuffers or Protobuf topic"), std::string::npos) << run.output;
  EXPECT_EQ(stop(sub), 0) << sub.output();
  EXPECT_EQ(sub.output().find("MSG"), std::string::npos) << sub.output();
  EXPECT_EQ(test::domain_files(test_domain()), std::vector<std::string>{});
}

TEST(TopicPub, JsonThatDoesNotMatchTheSchemaIsRefusedNamingTheField) {
  ChildProcess fb = subscriber_child<schemas::fb::Heartbeat>(kFbTopic, 0, describe_fb);
  ASSERT_TRUE(fb.wait_for_line("READY", 20s)) << fb.output();
  ChildProcess pb = subscriber_child<schemas::pb::Heartbeat>(kPbTopic, 0, describe_pb);
  ASSERT_TRUE(pb.wait_for_line("READY", 20s)) << pb.output();

  const auto fb_run = axon({"topic", "pub", kFbTopic, "{\"component\": \"x\",\n \"cpu_percnt\": 2}"});
  const auto pb_run = axon({"topic", "pub", kPbTopic, R"({"component": "x", "cpu_percnt": 2})", "--json"});
  const auto fb_enum = axon({"topic", "pub", kFbTopic, R"({"health": "Sleepy"})"});

  EXPECT_EQ(fb_run.exit_code, 1) << fb_run.output;
  EXPECT_NE(fb_run.output.find("the JSON is not a message of axon.schemas.fb.Heartbeat: line 2, column "),
            std::string::npos)
      << fb_run.output;
  EXPECT_NE(fb_run.output.find("unknown field: cpu_percnt"), std::string::npos) << fb_run.output;
  EXPECT_EQ(pb_run.exit_code, 1) << pb_run.output;
  EXPECT_NE(pb_run.output.find("the JSON is not a message of axon.schemas.pb.Heartbeat: cpu_percnt"), std::string::npos)
      << pb_run.output;
  ASSERT_EQ(json_doc(pb_run.output)["refusals"].size(), 1U);
  EXPECT_EQ(fb_enum.exit_code, 1) << fb_enum.output;
  EXPECT_NE(fb_enum.output.find("Sleepy"), std::string::npos) << fb_enum.output;
  // Nothing was sent (a subscriber prints what it took before it stops).
  EXPECT_EQ(stop(fb), 0) << fb.output();
  EXPECT_EQ(stop(pb), 0) << pb.output();
  EXPECT_EQ(fb.output().find("MSG"), std::string::npos) << fb.output();
  EXPECT_EQ(pb.output().find("MSG"), std::string::npos) << pb.output();
  EXPECT_EQ(test::domain_files(test_domain()), std::vector<std::string>{});
}

TEST(TopicPub, MessageLargerThanTheTopicsChunksIsRefused) {
  const std::uint32_t domain = test_domain();
  // A publisher that declares 64-byte messages for the topic (PublisherQos::max_payload_bytes).
  ChildProcess publisher = ChildProcess::fork_and_run([domain]() -> int {
    std::signal(SIGTERM, test::request_child_stop);
    auto node = Node::create("pub_test_small", NodeOptions{.domain_id = domain});
    auto pub = node ? (*node)->advertise<schemas::fb::Heartbeat>(kFbTopic, PublisherQos{.max_payload_bytes = 64})
                    : Error(ErrorCode::kClosed, "no node");
    if (!pub) {
      std::printf("ERROR %s\n", std::string(pub.error().message()).c_str());
      return 1;
    }
    std::printf("READY\n");
    std::fflush(stdout);
    while (!test::g_child_stop_requested.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(5ms);
    }
    return 0;
  });
  ASSERT_TRUE(publisher.wait_for_line("READY", 20s)) << publisher.output();

  const auto small = axon({"topic", "pub", kFbTopic, R"({"component": "ok"})"});
  const auto large = axon({"topic", "pub", kFbTopic, "{\"component\": \"" + std::string(200, 'x') + "\"}", "--json"});

  EXPECT_EQ(small.exit_code, 0) << small.output;
  EXPECT_EQ(large.exit_code, 1) << large.output;
  EXPECT_NE(large.output.find("bytes, more than the 64 bytes the topic's chunks hold"), std::string::npos)
      << large.output;
  EXPECT_EQ(json_doc(large.output)["published"].as<int>(), 0);
  EXPECT_EQ(stop(publisher), 0) << publisher.output();
  EXPECT_EQ(test::domain_files(domain), std::vector<std::string>{});
}

TEST(TopicPub, CountWithoutRateIsAUsageError) {
  const auto run = axon({"topic", "pub", kFbTopic, "{}", "--count", "3"});

  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--count requires --rate"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace axon::tools
