// A node's pool sized from the topics it publishes (issue 15): the topic key
// rate_hz, the node key publishes:, pool.chunk_classes: auto, the derivation
// rule (src/config/pool_derivation.hpp) and the mistakes refused with the
// key, the value and what is expected.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "axon/deployment_config.hpp"
#include "src/config/pool_derivation.hpp"
#include "tests/support/config_error_case.hpp"

namespace axon {
namespace {

using detail::chunks_held;
using detail::derive_chunk_classes;
using detail::TopicDemand;

constexpr const char* kVehicle =
    "nodes:\n"
    "  - name: perception\n"
    "    publishes: [camera, objects, diagnostics]\n"
    "    pool: {chunk_classes: auto}\n"
    "topics:\n"
    "  - {name: camera, max_payload_bytes: 2 MiB, rate_hz: 30, depth: 4}\n"
    "  - {name: objects, max_payload_bytes: 100, rate_hz: 10, durability: transient_local, durability_depth: 8}\n"
    "  - {name: diagnostics, max_payload_bytes: 128, overflow: latest_only, reserved_chunks: 6}\n";

TEST(PoolFromTopics, ReadsRateHzAndPublishes) {
  auto sut = parse_deployment_config(kVehicle, "vehicle.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_DOUBLE_EQ(sut->find_topic("camera")->rate_hz, 30.0);
  EXPECT_DOUBLE_EQ(sut->find_topic("diagnostics")->rate_hz, 0.0) << "not given";
  const NodeConfig* node = sut->find_node("perception");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->publishes, (std::vector<std::string>{"camera", "objects", "diagnostics"}));
  EXPECT_TRUE(node->chunk_classes_auto);
}

TEST(PoolFromTopics, AutoGivesOneClassPerSizeWithTheChunksItsTopicsHold) {
  auto sut = parse_deployment_config(kVehicle, "vehicle.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  const NodeConfig* node = sut->find_node("perception");
  ASSERT_EQ(node->chunk_classes.size(), 2U);
  // objects (100 B, rounded to 128) and diagnostics (128 B) share a class:
  // objects 16 (depth) + 8 (history) + 1 (loan) + 1 (10 Hz x 100 ms) = 26,
  // diagnostics max(1 (latest_only) + 1, 6 reserved, floor 4) = 6.
  EXPECT_EQ(node->chunk_classes[0].payload_bytes, 128U);
  EXPECT_EQ(node->chunk_classes[0].count, 32U);
  EXPECT_EQ(node->chunk_class_topics[0], (std::vector<std::string>{"objects", "diagnostics"}));
  // camera: 4 (depth) + 1 (loan) + 3 (30 Hz x 100 ms) = 8.
  EXPECT_EQ(node->chunk_classes[1].payload_bytes, 2U << 20U);
  EXPECT_EQ(node->chunk_classes[1].count, 8U);
  EXPECT_EQ(node->chunk_class_topics[1], std::vector<std::string>{"camera"});
  EXPECT_EQ(detail::describe_derived_pool(*node),
            "128 B x 32 (objects, diagnostics), 2 MiB x 8 (camera); 16.0 MiB of payload in all");
}

TEST(PoolFromTopics, ListedClassesStayAsTheyAreWithPublishes) {
  auto sut = parse_deployment_config(
      "nodes:\n  - name: a\n    publishes: [t]\n    pool: {chunk_classes: [{payload_bytes: 1 KiB, count: 3}]}\n"
      "topics:\n  - {name: t, max_payload_bytes: 1 KiB, rate_hz: 1000}\n",
      "a.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  ASSERT_EQ(sut->find_node("a")->chunk_classes.size(), 1U);
  EXPECT_EQ(sut->find_node("a")->chunk_classes[0].count, 3U);
  EXPECT_FALSE(sut->find_node("a")->chunk_classes_auto);
}

TEST(PoolFromTopics, APublishedTopicFitsAListedClassAsThePoolRoundsIt) {
  auto sut = parse_deployment_config(
      "nodes:\n  - {name: a, publishes: [t], pool: {chunk_classes: [{payload_bytes: 1000, count: 3}]}}\n"
      "topics:\n  - {name: t, max_payload_bytes: 1024}\n",
      "a.yaml");

  EXPECT_TRUE(sut.ok()) << "a 1000 B class holds 1024 B (whole cache lines): " << sut.error().message();
}

TopicConfig topic_with(SubscriberQos subscriber, PublisherQos publisher, double rate_hz) {
  TopicConfig topic;
  topic.name = "t";
  topic.subscriber = subscriber;
  topic.publisher = publisher;
  topic.rate_hz = rate_hz;
  return topic;
}

TEST(PoolDerivation, ChunksHeldCountQueueHistoryLoanAndRate) {
  EXPECT_EQ(chunks_held(topic_with({.depth = 16}, {}, 0)), 17U) << "depth + the loan";
  EXPECT_EQ(chunks_held(topic_with({.depth = 16}, {}, 100)), 27U) << "+ 100 ms at 100 Hz";
  EXPECT_EQ(chunks_held(topic_with({.depth = 16}, {}, 0.5)), 18U) << "a slow topic rounds up to one";
  EXPECT_EQ(
      chunks_held(topic_with({.depth = 2}, {.durability = Durability::kTransientLocal, .durability_depth = 5}, 0)), 8U);
  EXPECT_EQ(chunks_held(topic_with({.depth = 16, .overflow = Overflow::kLatestOnly}, {}, 0)), 4U)
      << "a mailbox of one holds 1 + the loan: the floor";
  EXPECT_EQ(chunks_held(topic_with({.depth = 2}, {.reserved_chunks = 40}, 0)), 40U) << "the reservation";
}

TEST(PoolDerivation, TopicsOfOneRoundedSizeShareAClass) {
  auto sut = derive_chunk_classes({{.topic = "b", .payload_bytes = 1000, .chunks = 5},
                                   {.topic = "a", .payload_bytes = 65, .chunks = 4},
                                   {.topic = "c", .payload_bytes = 1024, .chunks = 6}});

  ASSERT_EQ(sut.classes.size(), 2U);
  EXPECT_EQ(sut.classes[0].payload_bytes, 128U);
  EXPECT_EQ(sut.classes[0].count, 4U);
  EXPECT_EQ(sut.classes[1].payload_bytes, 1024U);
  EXPECT_EQ(sut.classes[1].count, 11U);
  EXPECT_EQ(sut.topics[1], (std::vector<std::string>{"b", "c"}));
}

TEST(PoolDerivation, MoreThanSixteenSizesMergeWhereItCostsTheLeastMemory) {
  std::vector<TopicDemand> demands;
  for (std::uint64_t i = 1; i <= 16; ++i) {
    demands.push_back({.topic = "big" + std::to_string(i), .payload_bytes = i << 20U, .chunks = 4});
  }
  demands.push_back({.topic = "tiny", .payload_bytes = 64, .chunks = 100});
  demands.push_back({.topic = "small", .payload_bytes = 128, .chunks = 10});

  auto sut = derive_chunk_classes(demands);

  ASSERT_EQ(sut.classes.size(), 16U);
  // Cheapest: tiny into small (100 x 64 B), then small into big1 (110 x ~1 MiB)
  // costs more than big1 into big2 (4 x 1 MiB).
  EXPECT_EQ(sut.classes[0].payload_bytes, 128U);
  EXPECT_EQ(sut.classes[0].count, 110U);
  EXPECT_EQ(sut.topics[0], (std::vector<std::string>{"tiny", "small"}));
  EXPECT_EQ(sut.classes[1].payload_bytes, 2U << 20U);
  EXPECT_EQ(sut.classes[1].count, 8U);
  EXPECT_EQ(sut.topics[1], (std::vector<std::string>{"big1", "big2"}));
  for (std::size_t i = 1; i < sut.classes.size(); ++i) {
    EXPECT_GT(sut.classes[i].payload_bytes, sut.classes[i - 1].payload_bytes);
  }
}

using Case = test::ConfigErrorCase;

class PoolFromTopicsErrors : public ::testing::TestWithParam<Case> {};

TEST_P(PoolFromTopicsErrors, NameTheKeyTheValueAndWhatIsExpected) { test::expect_refused(GetParam()); }

const Case kCases[] = {
    {"rate of zero", "topics:\n  - {name: a, rate_hz: 0}\n", "bad.yaml:2:24:",
     "topic 'a' rate_hz (messages per second) must be from 0.001 to 100000 (decimals allowed), found 0"},
    {"rate too high", "topics:\n  - {name: a, rate_hz: 1e6}\n", "bad.yaml:2:24:", "from 0.001 to 100000"},
    {"rate as text", "topics:\n  - {name: a, rate_hz: fast}\n",
     "bad.yaml:2:24:", "topic 'a' rate_hz (messages per second) must be a number, found 'fast'"},
    {"misspelt rate", "topics:\n  - {name: a, rate_h: 10}\n", "bad.yaml:2:15:", "did you mean 'rate_hz'?"},
    {"publishes not a list", "nodes:\n  - {name: n, publishes: camera}\n",
     "bad.yaml:2:26:", "node 'n' publishes must be a list"},
    {"publishes a topic twice", "nodes:\n  - {name: n, publishes: [a, a]}\n",
     "bad.yaml:2:30:", "node 'n' publishes lists topic 'a' twice"},
    {"publishes a misspelt topic", "nodes:\n  - {name: n, publishes: [camra]}\ntopics:\n  - {name: camera}\n",
     "bad.yaml:2:27:", "node 'n' publishes topic 'camra', which is not listed under topics: (did you mean 'camera'?)"},
    {"classes neither list nor auto", "nodes:\n  - {name: n, pool: {chunk_classes: many}}\n",
     "bad.yaml:2:37:", "chunk_classes must be a list of {payload_bytes, count} or auto"},
    {"auto without publishes", "nodes:\n  - {name: n, pool: {chunk_classes: auto}}\n", "bad.yaml:2:37:",
     "node 'n' pool chunk_classes is auto, which sizes the pool from the topics the node publishes, but the node "
     "has no publishes: list"},
    {"auto and a topic without size",
     "nodes:\n  - {name: n, publishes: [a], pool: {chunk_classes: auto}}\ntopics:\n  - {name: a, rate_hz: 10}\n",
     "bad.yaml:2:27:", "but topic 'a' it publishes has no max_payload_bytes"},
    {"published topic bigger than the listed classes",
     "nodes:\n  - {name: n, publishes: [a], pool: {chunk_classes: [{payload_bytes: 1 KiB, count: 2}]}}\n"
     "topics:\n  - {name: a, max_payload_bytes: 4 KiB}\n",
     "bad.yaml:2:27:",
     "node 'n' publishes topic 'a' of max_payload_bytes 4096, but its largest pool chunk_classes entry holds 1024 "
     "bytes"},
};

INSTANTIATE_TEST_SUITE_P(All, PoolFromTopicsErrors, ::testing::ValuesIn(kCases));

TEST(PoolFromTopics, RefusesAutoBeyondTheChunksOfAClass) {
  // 110 topics of 64 B at 100 kHz: 110 x (16 + 1 + 10000) chunks in one class.
  std::string publishes;
  std::string topics;
  for (int i = 0; i < 110; ++i) {
    publishes += (i == 0 ? "" : ", ") + std::string("t") + std::to_string(i);
    topics += "  - {name: t" + std::to_string(i) + ", max_payload_bytes: 64, rate_hz: 100000}\n";
  }
  const std::string text =
      "nodes:\n  - name: n\n    publishes: [" + publishes + "]\n    pool: {chunk_classes: auto}\ntopics:\n" + topics;

  auto sut = parse_deployment_config(text, "bad.yaml");

  ASSERT_FALSE(sut.ok());
  const std::string message(sut.error().message());
  EXPECT_EQ(message.rfind("bad.yaml:4:27:", 0), 0U) << message;
  EXPECT_NE(message.find("its class of 64 bytes would need 1101870 chunks, more than 1048576; lower rate_hz"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace axon
