// What other hosts announce for graph events: publisher entries
// (kEntryPublishers) are reported by RemoteHosts::endpoints_of() but never
// become routes or writer destinations, participants of this host are left
// to its registry, and the entries survive the wire (encode, parse).
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "transports/udp/remote_hosts.hpp"
#include "transports/udp/udp_graph.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp {
namespace {

constexpr std::uint64_t kTopic = 42;

/// Encodes and parses an ANNOUNCE of `host` with `entries`, and hands it to `sut`.
RemoteHosts::AnnounceOutcome announce(RemoteHosts& sut, std::uint64_t sender, const char* host, std::uint16_t port,
                                      const std::vector<AnnounceEntry>& entries) {
  Announce a;
  a.domain_id = 1;
  a.ipv4 = 0x0A000001U;
  a.port = port;
  a.period_ms = 50;
  std::memcpy(a.host.data(), host, std::strlen(host));
  std::array<std::byte, kMaxDatagramBytes> out{};
  const std::size_t bytes = encode_announce(out, sender, a, entries);
  auto parsed = parse_datagram(std::span<const std::byte>(out.data(), bytes));
  EXPECT_TRUE(parsed) << parsed.error().message();
  return sut.on_announce(sender, parsed->announce, 0);
}

AnnounceEntry publishers(std::uint32_t count) {
  return {.topic_id = kTopic, .type_hash = 7, .type_name_hash = 8, .flags = kEntryPublishers, .subscribers = count};
}
AnnounceEntry subscriptions(std::uint32_t count) {
  return {.topic_id = kTopic, .type_hash = 7, .type_name_hash = 8, .flags = kEntryReceiver, .subscribers = count};
}

TEST(RemoteGraph, PublisherEntriesAreEndpointsButNeverRoutes) {
  RemoteHosts sut;
  announce(sut, 1, "h1", 7401, {publishers(2)});
  EXPECT_TRUE(sut.routes(kTopic).empty()) << "a publisher entry taken for a subscription";
  const auto d =
      sut.destinations_for(WriterTopic{.topic_id = kTopic, .topic_name = "t", .type = {}, .evolution = false});
  EXPECT_TRUE(d.destinations.empty());
  const auto endpoints = sut.endpoints_of(kTopic, "h0");
  ASSERT_EQ(endpoints.size(), 1U);
  EXPECT_EQ(endpoints[0].host, "h1");
  EXPECT_EQ(endpoints[0].publishers, 2U);
  EXPECT_EQ(endpoints[0].subscribers, 0U);
}

TEST(RemoteGraph, SubscriptionsAreEndpointsAndRoutes) {
  RemoteHosts sut;
  announce(sut, 1, "h1", 7401, {subscriptions(3), publishers(1)});
  ASSERT_EQ(sut.routes(kTopic).size(), 1U);
  EXPECT_EQ(sut.routes(kTopic)[0].subscribers, 3U);
  const auto endpoints = sut.endpoints_of(kTopic, "h0");
  ASSERT_EQ(endpoints.size(), 1U);
  EXPECT_EQ(endpoints[0].publishers, 1U);
  EXPECT_EQ(endpoints[0].subscribers, 3U);
}

TEST(RemoteGraph, ParticipantsOfThisHostAndOtherTopicsAreLeftOut) {
  RemoteHosts sut;
  announce(sut, 1, "h0", 7401, {publishers(1)});
  announce(sut, 2, "h2", 7402, {publishers(1)});
  const auto endpoints = sut.endpoints_of(kTopic, "h0");
  ASSERT_EQ(endpoints.size(), 1U);
  EXPECT_EQ(endpoints[0].host, "h2");
  EXPECT_TRUE(sut.endpoints_of(kTopic + 1, "h0").empty());
}

TEST(RemoteGraph, ALostParticipantsEndpointsLeaveAndAChangedAnnouncementSaysSo) {
  RemoteHosts sut;
  announce(sut, 1, "h1", 7401, {publishers(1)});
  EXPECT_TRUE(announce(sut, 1, "h1", 7401, {}).changed) << "the publisher left: the graph must move";
  EXPECT_TRUE(sut.endpoints_of(kTopic, "h0").empty());
  announce(sut, 1, "h1", 7401, {publishers(1)});
  ASSERT_TRUE(sut.remove(1));
  EXPECT_TRUE(sut.endpoints_of(kTopic, "h0").empty());
}

TEST(RemoteGraph, RemoteEndpointIdsAreDistinctAndNeverALocalOne) {
  std::vector<std::uint64_t> ids;
  for (std::uint64_t participant : {1ULL, 2ULL, 0xFFFFFFFFFFFFFFFFULL}) {
    for (std::uint32_t i = 0; i < 4; ++i) {
      ids.push_back(remote_endpoint_id(participant, GraphEndpointKind::kPublisher, i));
      ids.push_back(remote_endpoint_id(participant, GraphEndpointKind::kSubscriber, i));
    }
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EXPECT_NE(ids[i] >> 63U, 0U) << "a local endpoint id (slot << 32 | generation) has the top bit clear";
    for (std::size_t j = i + 1; j < ids.size(); ++j) {
      EXPECT_NE(ids[i], ids[j]);
    }
  }
}

}  // namespace
}  // namespace axon::udp
