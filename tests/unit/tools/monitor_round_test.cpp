// axon monitor's arithmetic without processes: counts of two looks turned into rates, the worst subscriber's
// latency, the fullest queue, the sort orders and the screen cut to the window.
#include "src/tools/axon/graph/monitor_round.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "src/tools/axon/graph/monitor_screen.hpp"
#include "src/tools/axon/graph/publish_rates.hpp"

namespace axon::tools {
namespace {

constexpr std::int64_t kSecondNs = 1'000'000'000;

DomainView view_with(const std::vector<std::string>& topics) {
  DomainView view;
  view.exists = true;
  view.consistent = true;
  for (std::uint32_t slot = 0; slot < topics.size(); ++slot) {
    view.topics.push_back(TopicView{.slot = slot, .name = topics[slot]});
    view.publishers.push_back(
        EndpointView{.kind = GraphEndpointKind::kPublisher, .endpoint_id = 100 + slot, .topic_slot = slot});
  }
  return view;
}

PublisherTrafficView traffic(std::uint64_t id, const std::string& topic, std::uint64_t messages, std::uint64_t bytes) {
  return PublisherTrafficView{.publisher_id = id, .topic = topic, .published = messages, .published_bytes = bytes};
}

ConnectionView queue(std::uint64_t subscriber, std::uint64_t delivered, std::uint64_t dropped, std::uint32_t queued,
                     std::uint32_t depth) {
  return ConnectionView{.topic_slot = 0,
                        .publisher_id = 100,
                        .subscriber_id = subscriber,
                        .delivered = delivered,
                        .dropped_oldest = dropped,
                        .queued = queued,
                        .depth = depth};
}

TEST(MonitorCounters, TurnsTheCountsOfTwoLooksIntoRatesAndKnowsNothingAtTheFirst) {
  MonitorCounters sut;
  const DomainView view = view_with({"lidar"});
  LiveStatsView stats{.publishers = {traffic(100, "lidar", 1000, 64'000)}, .subscribers = {}, .problems = {}};
  TopicConnections queues{.connections = {queue(7, 900, 100, 1, 4)}, .unreadable = {}};

  const Round first = sut.look(view, queues, stats, kSecondNs, kSecondNs);
  ASSERT_EQ(first.topics.size(), 1U);
  EXPECT_LT(first.topics[0].rate_hz, 0);
  EXPECT_LT(first.topics[0].bytes_per_s, 0);
  EXPECT_LT(first.topics[0].dropped_per_s, 0);

  stats.publishers[0] = traffic(100, "lidar", 1100, 70'400);  // 100 messages of 64 B in half a second
  queues.connections[0] = queue(7, 990, 110, 3, 4);
  const Round second = sut.look(view, queues, stats, kSecondNs + (kSecondNs / 2), kSecondNs);
  const TopicRound& t = second.topics[0];
  EXPECT_DOUBLE_EQ(second.at_s, 0.5);
  EXPECT_DOUBLE_EQ(t.rate_hz, 200.0);
  EXPECT_DOUBLE_EQ(t.bytes_per_s, 12'800.0);
  EXPECT_DOUBLE_EQ(t.delivered_per_s, 180.0);
  EXPECT_DOUBLE_EQ(t.dropped_per_s, 20.0);
  EXPECT_EQ(t.queued, 3U);
  EXPECT_EQ(t.fullest_queued, 3U);
  EXPECT_EQ(t.fullest_depth, 4U);
  EXPECT_EQ(t.publishers, 1U);
}

TEST(MonitorCounters, ShowsTheWorstSubscribersLatencyAndTheFullestQueueByFillOverDepth) {
  MonitorCounters sut;
  const DomainView view = view_with({"lidar"});
  LiveStatsView stats;
  stats.subscribers = {
      SubscriberLatencyView{.subscriber_id = 1, .topic = "lidar", .count = 10, .p50_ns = 2'000, .p99_ns = 9'000},
      SubscriberLatencyView{.subscriber_id = 2, .topic = "lidar", .count = 10, .p50_ns = 3'000, .p99_ns = 5'000},
      // No take measured in the window: its zeros are not a latency.
      SubscriberLatencyView{.subscriber_id = 3, .topic = "lidar", .count = 0},
      SubscriberLatencyView{.subscriber_id = 4, .topic = "camera", .count = 10, .p50_ns = 90'000, .p99_ns = 90'000}};
  // 2 of 4 (50 %) is fuller than 6 of 16 (37 %), though 6 wait there.
  const TopicConnections queues{.connections = {queue(1, 0, 0, 6, 16), queue(2, 0, 0, 2, 4)}, .unreadable = {}};

  const TopicRound t = sut.look(view, queues, stats, kSecondNs, 0).topics[0];
  EXPECT_EQ(t.p50_ns, 3'000);
  EXPECT_EQ(t.p99_ns, 9'000);
  EXPECT_EQ(t.fullest_queued, 2U);
  EXPECT_EQ(t.fullest_depth, 4U);
  EXPECT_EQ(t.queued, 8U);
}

std::vector<std::string> names(const std::vector<TopicRound>& topics) {
  std::vector<std::string> out;
  for (const TopicRound& t : topics) {
    out.push_back(t.name);
  }
  return out;
}

TEST(SortTopics, ByNameAToZOrByAFigureLargestFirstWithUnknownFiguresLast) {
  std::vector<TopicRound> sut = {
      TopicRound{.name = "b", .rate_hz = 10, .p99_ns = 5}, TopicRound{.name = "a", .rate_hz = -1, .p99_ns = 50},
      TopicRound{.name = "c", .rate_hz = 300, .p99_ns = -1}, TopicRound{.name = "d", .rate_hz = 10, .p99_ns = 5}};

  sort_topics(sut, MonitorSort::kName);
  EXPECT_EQ(names(sut), (std::vector<std::string>{"a", "b", "c", "d"}));
  sort_topics(sut, MonitorSort::kRate);
  EXPECT_EQ(names(sut), (std::vector<std::string>{"c", "b", "d", "a"}));
  sort_topics(sut, MonitorSort::kP99);
  EXPECT_EQ(names(sut), (std::vector<std::string>{"a", "b", "d", "c"}));
}

TEST(SortTopics, ParsesEveryWordOfItsOptionAndNothingElse) {
  for (const std::string& word : sort_words()) {
    const auto sort = parse_sort(word);
    ASSERT_TRUE(sort.has_value()) << word;
    EXPECT_EQ(sort_word(*sort), word);
  }
  EXPECT_FALSE(parse_sort("colour").has_value());
}

TEST(MonitorScreen, CutsTheTableToTheWindowAndSaysHowManyTopicsDidNotFit) {
  Round round;
  for (int i = 0; i < 30; ++i) {
    round.topics.push_back(TopicRound{.name = "topic" + std::to_string(100 + i)});
  }
  const std::string sut =
      monitor_screen_text(round, ScreenHeader{.domain_id = 3, .interval_s = 1, .sort = MonitorSort::kName}, 10);

  EXPECT_EQ(std::count(sut.begin(), sut.end(), '\n'), 10) << sut;
  EXPECT_NE(sut.find("axon monitor - domain 3 - "), std::string::npos) << sut;
  EXPECT_NE(sut.find("topic105"), std::string::npos) << sut;
  EXPECT_EQ(sut.find("topic106"), std::string::npos) << sut;
  EXPECT_NE(sut.find("... and 24 more topics"), std::string::npos) << sut;
}

TEST(PublishRates, SumsTheTopicsPublishersSeenByBothReadsAndLeavesOutTheOthers) {
  const PublishSample before = sample_published({traffic(1, "lidar", 100, 1'000), traffic(2, "lidar", 50, 500),
                                                 traffic(3, "lidar", 900, 9'000), traffic(9, "camera", 0, 0)},
                                                kSecondNs);
  const std::vector<PublisherTrafficView> now = {traffic(1, "lidar", 300, 3'000),  // 200 in 2 s
                                                 traffic(2, "lidar", 150, 1'500),  // 100 in 2 s
                                                 traffic(3, "lidar", 10, 100),     // went down: a torn read, left out
                                                 traffic(4, "lidar", 5'000, 0),    // new: no earlier count
                                                 traffic(9, "camera", 40, 400)};

  const PublishRates sut = publish_rates("lidar", before, now, 3 * kSecondNs);

  EXPECT_DOUBLE_EQ(sut.rate_hz, 150.0);
  EXPECT_DOUBLE_EQ(sut.bytes_per_s, 1'500.0);
  EXPECT_DOUBLE_EQ(publish_rates("camera", before, now, 3 * kSecondNs).rate_hz, 20.0);
  EXPECT_LT(publish_rates("radar", before, now, 3 * kSecondNs).rate_hz, 0) << "no publisher: not measured";
  EXPECT_LT(publish_rates("lidar", PublishSample{}, now, 3 * kSecondNs).rate_hz, 0) << "no earlier read";
}

}  // namespace
}  // namespace axon::tools
