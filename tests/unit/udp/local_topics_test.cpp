// LocalTopics keeps, next to the reliable count, the QoS of each local
// subscription: what the topic is received with from other hosts is the
// strictest of those still subscribed.
#include "transports/udp/local_topics.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace axon::udp {
namespace {

TopicDescriptor topic_named(const std::string& name) {
  TopicDescriptor topic;
  topic.name = name;
  topic.type.name = "test.Sample";
  topic.type.hash = 0x1234;
  return topic;
}

SubscriptionQos best_effort() { return SubscriptionQos{}; }

SubscriptionQos reliable(std::int64_t timeout_ns) {
  return SubscriptionQos{
      .reliability = Reliability::kReliable, .overflow = Overflow::kDefault, .block_timeout_ns = timeout_ns};
}

SubscriptionQos overflow(Overflow kind, std::int64_t timeout_ns = 0) {
  return SubscriptionQos{.reliability = Reliability::kBestEffort, .overflow = kind, .block_timeout_ns = timeout_ns};
}

// The receiver lock is per (domain, host): a host name of this process's own
// keeps parallel test runs apart.
std::string own_host() { return "local-topics-" + std::to_string(::getpid()); }

TEST(LocalTopicsQos, StrictestIsReliableWhenAnyIsAndTheLongestBlockingTimeout) {
  const SubscriptionQos result = strictest({best_effort(), reliable(5'000), overflow(Overflow::kDefault, 9'000)});
  EXPECT_EQ(result.reliability, Reliability::kReliable);
  EXPECT_EQ(result.overflow, Overflow::kDefault);
  // The best-effort default subscriber's 9000 cannot make a publisher wait: not counted.
  EXPECT_EQ(result.block_timeout_ns, 5'000);
}

TEST(LocalTopicsQos, StrictestOverflowRanksBlockThenKeepLastThenReject) {
  EXPECT_EQ(strictest({overflow(Overflow::kRejectNewest), overflow(Overflow::kDefault)}).overflow,
            Overflow::kRejectNewest);
  EXPECT_EQ(strictest({overflow(Overflow::kRejectNewest), overflow(Overflow::kLatestOnly)}).overflow,
            Overflow::kLatestOnly);
  const SubscriptionQos blocking =
      strictest({overflow(Overflow::kDropOldest), overflow(Overflow::kBlockPublisher, 7'000)});
  EXPECT_EQ(blocking.overflow, Overflow::kBlockPublisher);
  EXPECT_EQ(blocking.block_timeout_ns, 7'000);
  EXPECT_EQ(strictest({}), SubscriptionQos{});
}

TEST(LocalTopicsQos, ReceivedTopicFollowsTheSubscriptionsStillThere) {
  LocalTopics topics(7, own_host());
  const TopicDescriptor topic = topic_named("/qos/tracked");
  const std::uint64_t id = topic_id_of(topic.name);
  EXPECT_FALSE(topics.received_topic(id).has_value());

  topics.add(topic, best_effort());
  auto received = topics.received_topic(id);
  ASSERT_TRUE(received.has_value()) << "the only participant of the host holds the receiver lock";
  EXPECT_EQ(received->descriptor.name, topic.name);
  EXPECT_EQ(received->qos, SubscriptionQos{});

  topics.add(topic, reliable(3'000));
  topics.add(topic, overflow(Overflow::kBlockPublisher, 8'000));
  received = topics.received_topic(id);
  ASSERT_TRUE(received.has_value());
  EXPECT_EQ(received->qos.reliability, Reliability::kReliable);
  EXPECT_EQ(received->qos.overflow, Overflow::kBlockPublisher);
  EXPECT_EQ(received->qos.block_timeout_ns, 8'000);

  // The blocking one leaves: what remains is reliable with its own timeout.
  topics.remove(topic.name, overflow(Overflow::kBlockPublisher, 8'000));
  received = topics.received_topic(id);
  ASSERT_TRUE(received.has_value());
  EXPECT_EQ(received->qos, reliable(3'000));

  topics.remove(topic.name, reliable(3'000));
  received = topics.received_topic(id);
  ASSERT_TRUE(received.has_value());
  EXPECT_EQ(received->qos, SubscriptionQos{});
  EXPECT_EQ(topics.announce_entries().at(0).flags & kEntryReliable, 0U) << "the reliable count follows too";

  topics.remove(topic.name, best_effort());
  EXPECT_FALSE(topics.received_topic(id).has_value());
}

TEST(LocalTopicsQos, AnotherParticipantOfTheHostReceivesNothingOverRdmaEither) {
  LocalTopics first(7, own_host() + "-b");
  LocalTopics second(7, own_host() + "-b");
  const TopicDescriptor topic = topic_named("/qos/one-receiver");
  first.add(topic, reliable(1'000));
  second.add(topic, reliable(1'000));
  EXPECT_TRUE(first.received_topic(topic_id_of(topic.name)).has_value());
  EXPECT_FALSE(second.received_topic(topic_id_of(topic.name)).has_value());
}

}  // namespace
}  // namespace axon::udp
