// The receive half of the RDMA streams (inbound_streams.hpp) on the host:
// two shared-memory nodes of one process (A sends, B receives) joined by a
// pair of loopback links (writes are memcpys into B's granted chunks). B's
// link has InboundStreams as its handler and a subscriber of the topic; A's
// side is driven by hand: the test encodes OPEN, WANT and CLOSE, writes
// chunks of A's real publisher into the grants it received, and a stub
// handler records what B answered.
#include "transports/rdma/inbound_streams.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/common/temp_dir.hpp"
#include "tests/support/eventually.hpp"
#include "tests/unit/rdma/loopback_link.hpp"
#include "transports/rdma/control_message.hpp"
#include "transports/rdma/immediate.hpp"
#include "transports/shm/shm_ports.hpp"
#include "transports/shm/shm_transport.hpp"

namespace axon::rdma {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kTopicId = 0x70F1C5;
constexpr std::uint64_t kTypeHash = 0xF00D;
constexpr std::uint32_t kStream = 1;  // the active side's first stream: A's
static_assert(kStream == first_stream_id(true));
constexpr std::uint32_t kWriter = 42;
constexpr std::uint32_t kLargest = 1000;  // the 4 KiB class

const TopicDescriptor& topic() {
  static const TopicDescriptor kDescriptor{
      .name = "frames",
      .type = TypeIdentity{.name = "bytes", .hash = kTypeHash, .size = 1, .align = 1},
      .max_payload_bytes = 4096};
  return kDescriptor;
}

/// What A's side heard from B.
class SenderStub final : public LinkHandler {
 public:
  struct Heard {
    ControlKind kind = ControlKind::kClose;
    std::uint32_t stream_id = 0;
    OpenFields open;
    std::uint32_t grants = 0;
  };

  void on_link_up(LinkPort& /*link*/) noexcept override {}
  void on_control(LinkPort& /*link*/, const ControlMessage& message) noexcept override {
    heard.push_back(Heard{.kind = message.kind,
                          .stream_id = message.stream_id,
                          .open = message.open,
                          .grants = message.kind == ControlKind::kGrant ? message.grant.count : 0});
    if (message.kind == ControlKind::kGrant) {
      for (std::uint32_t i = 0; i < message.grant.count; ++i) {
        credits[message.stream_id].push_back(message.grant.entry(i));  // copied: the buffer is reposted
      }
    }
  }
  void on_write(LinkPort& link, const ResolvedWrite& /*write*/) noexcept override {
    link.fail("the test's sender receives no stream");
  }
  void on_link_lost(LinkPort& /*link*/) noexcept override { ++losses; }

  [[nodiscard]] std::size_t count(ControlKind kind) const {
    std::size_t n = 0;
    for (const Heard& h : heard) {
      n += h.kind == kind ? 1 : 0;
    }
    return n;
  }

  std::vector<Heard> heard;
  std::map<std::uint32_t, std::deque<GrantEntry>> credits;
  int losses = 0;
};

const std::vector<ChunkClassConfig> kClasses{{256, 16}, {4096, 16}};

std::shared_ptr<shm::ShmTransport> make_node(const axon::test::TempDir& dir, std::uint32_t domain, const char* name,
                                             const std::vector<ChunkClassConfig>& classes = kClasses) {
  auto created = shm::ShmTransport::create(
      shm::ShmConfig{.domain_id = domain, .node_name = name, .shm_dir = dir.path(), .chunk_classes = classes});
  if (!created.ok()) {
    ADD_FAILURE() << created.error().message();
    return nullptr;
  }
  return std::move(*created);
}

std::vector<std::uint32_t> free_chunks(const shm::ShmTransport& node) {
  std::vector<std::uint32_t> free;
  for (const PoolClassStats& c : node.pool_stats()) {
    free.push_back(c.free_chunks);
  }
  return free;
}

/// A (sender) and B (receiver, InboundStreams) linked by a loopback pair.
class InboundStreamsTest : public ::testing::Test {
 protected:
  /// B's subscriber of the topic with `qos`, then the receive side.
  void start(const SubscriberQos& qos, InboundSettings settings = {},
             const std::vector<ChunkClassConfig>& b_classes = kClasses) {
    node_a = make_node(dir_a, 41, "sender");
    node_b = make_node(dir_b, 42, "receiver", b_classes);
    ASSERT_TRUE(node_a && node_b);
    auto advertised = node_a->advertise(topic(), PublisherQos{});
    ASSERT_TRUE(advertised.ok()) << advertised.error().message();
    publisher = std::static_pointer_cast<shm::ShmPublisherPort>(std::move(*advertised));
    auto subscribed = node_b->subscribe(topic(), qos);
    ASSERT_TRUE(subscribed.ok()) << subscribed.error().message();
    subscriber = std::move(*subscribed);
    free_before = free_chunks(*node_b);
    const InboundTopic inbound{.descriptor = topic(),
                               .reliability = qos.reliability == Reliability::kReliable ? WireReliability::kReliable
                                                                                        : WireReliability::kBestEffort,
                               .overflow = static_cast<WireOverflow>(qos.overflow),
                               .block_timeout_ns = static_cast<std::uint64_t>(qos.block_timeout_ns)};
    auto created = InboundStreams::create(
        node_b,
        [inbound](std::uint64_t id) -> std::optional<InboundTopic> {
          return id == kTopicId ? std::optional<InboundTopic>(inbound) : std::nullopt;
        },
        settings);
    ASSERT_TRUE(created.ok()) << created.error().message();
    sut = std::move(*created);
    auto [a, b] = testing::LoopbackLink::make_pair(node_a->own_chunk_area(), 0xA1, node_b->own_chunk_area(), 0xB2);
    link_a = std::move(a);
    link_b = std::move(b);
    link_a->set_handler(&stub);
    link_b->set_handler(sut.get());
    link_a->up();
  }

  void TearDown() override {
    if (link_a && !lost) {
      link_a->lose();
    }
  }

  /// Both ends handle what arrived until nothing moves.
  void pump() {
    for (int round = 0; round < 100; ++round) {
      if (link_b->pump() + link_a->pump() == 0) {
        return;
      }
    }
    ADD_FAILURE() << "the links kept moving for 100 rounds";
  }

  void send_control(std::size_t bytes) {
    auto sent = link_a->send_control(std::span<const std::byte>(buffer.data(), bytes));
    ASSERT_TRUE(sent.ok());
    ASSERT_EQ(*sent, SendOutcome::kPosted);
  }
  void open(std::uint64_t topic_id = kTopicId, std::uint64_t type_hash = kTypeHash, std::uint32_t stream = kStream,
            std::uint32_t largest = kLargest) {
    send_control(encode_open(
        buffer, stream,
        OpenFields{
            .topic_id = topic_id, .type_hash = type_hash, .writer_id = kWriter, .largest_message_bytes = largest}));
    pump();
  }
  void want(std::uint32_t messages, std::uint32_t stream = kStream) {
    send_control(encode_want(buffer, stream, messages));
    pump();
  }
  void close(std::uint32_t stream = kStream) {
    send_control(encode_close(buffer, stream));
    pump();
  }

  [[nodiscard]] std::size_t credits(std::uint32_t stream = kStream) { return stub.credits[stream].size(); }

  /// Writes message `n` (its bytes are n, n+1, ...) from a chunk of A's
  /// publisher into the oldest grant A holds; the grant's address.
  std::uint64_t write(std::uint32_t n, std::uint32_t bytes = kLargest) {
    std::deque<GrantEntry>& fifo = stub.credits[kStream];
    if (fifo.empty()) {
      ADD_FAILURE() << "no credit for message " << n;
      return 0;
    }
    const GrantEntry grant = fifo.front();
    fifo.pop_front();
    auto loaned = publisher->loan(bytes);
    if (!loaned.ok()) {
      ADD_FAILURE() << "A's publisher has no chunk";
      return 0;
    }
    for (std::uint32_t i = 0; i < bytes; ++i) {
      loaned->payload[i] = static_cast<std::byte>(n + i);
    }
    (void)publisher->publish_pinned(*loaned, bytes, 0);
    SentChunk pinned{.port = publisher, .handle = loaned->handle};
    const auto immediate =
        encode_immediate({.size_class = grant.size_class, .slot = grant.slot, .length = bytes}, grant.capacity_bytes);
    EXPECT_TRUE(immediate.has_value());
    auto posted = link_a->post_write(LinkWrite{.local = loaned->payload,
                                               .length = bytes,
                                               .remote_address = grant.address,
                                               .immediate = immediate.value_or(0)},
                                     pinned);
    EXPECT_TRUE(posted.ok() && *posted == WriteOutcome::kPosted);
    pump();
    return grant.address;
  }

  /// Takes one message at B's subscriber: checks it is message `n`, in the
  /// chunk at `address`; releases it.
  void expect_taken(std::uint32_t n, std::uint64_t address, std::uint32_t bytes = kLargest) {
    auto sample = subscriber->take();
    ASSERT_TRUE(sample.ok()) << "message " << n << " did not arrive";
    EXPECT_EQ(reinterpret_cast<std::uint64_t>(sample->payload), address) << "not delivered in place";
    EXPECT_EQ(sample->info.payload_bytes, bytes);
    bool intact = true;
    for (std::uint32_t i = 0; i < sample->info.payload_bytes && intact; ++i) {
      intact = sample->payload[i] == static_cast<std::byte>(n + i);
    }
    EXPECT_TRUE(intact) << "message " << n << " was changed";
    subscriber->release(*sample);
  }

  void lose() {
    link_a->lose();
    lost = true;
  }

  axon::test::TempDir dir_a{"axon-inbound-a"};
  axon::test::TempDir dir_b{"axon-inbound-b"};
  std::shared_ptr<shm::ShmTransport> node_a;
  std::shared_ptr<shm::ShmTransport> node_b;
  std::shared_ptr<shm::ShmPublisherPort> publisher;
  std::shared_ptr<SubscriberPort> subscriber;
  std::vector<std::uint32_t> free_before;
  std::unique_ptr<InboundStreams> sut;
  SenderStub stub;
  std::unique_ptr<testing::LoopbackLink> link_a;
  std::unique_ptr<testing::LoopbackLink> link_b;
  bool lost = false;
  std::array<std::byte, kControlSlotBytes> buffer{};
};

TEST_F(InboundStreamsTest, OpenIsAnsweredWithTheSubscribersQosThenCreditsGrantsInOneMessage) {
  start(SubscriberQos{.depth = 16, .reliability = Reliability::kReliable, .block_timeout_ns = 5'000'000});

  open();

  ASSERT_EQ(stub.heard.size(), 2U);
  const SenderStub::Heard& answer = stub.heard[0];
  EXPECT_EQ(answer.kind, ControlKind::kOpen);
  EXPECT_EQ(answer.stream_id, kStream);
  EXPECT_EQ(answer.open.topic_id, kTopicId);
  EXPECT_EQ(answer.open.type_hash, kTypeHash);
  EXPECT_EQ(answer.open.writer_id, kWriter);
  EXPECT_EQ(answer.open.largest_message_bytes, kLargest);
  EXPECT_EQ(answer.open.reliability, WireReliability::kReliable);
  EXPECT_EQ(answer.open.overflow, WireOverflow::kDefault);
  EXPECT_EQ(answer.open.block_timeout_ns, 5'000'000U);
  EXPECT_EQ(stub.heard[1].kind, ControlKind::kGrant);
  EXPECT_EQ(stub.heard[1].grants, 8U);
  ASSERT_EQ(credits(), 8U);
  const shm::ChunkArea area = node_b->own_chunk_area();
  for (const GrantEntry& g : stub.credits[kStream]) {
    EXPECT_EQ(g.size_class, 1U);  // 4 KiB: the class of 1000 bytes
    EXPECT_EQ(g.capacity_bytes, 4096U);
    EXPECT_GE(g.address, reinterpret_cast<std::uint64_t>(area.base));
    EXPECT_LE(g.address + g.capacity_bytes, reinterpret_cast<std::uint64_t>(area.base) + area.bytes);
  }
  EXPECT_EQ(link_b->grants().outstanding(1), 8U);
  const InboundCountersSnapshot counters = sut->counters();
  EXPECT_EQ(counters.streams_opened, 1U);
  EXPECT_EQ(counters.grants_sent, 8U);
  EXPECT_EQ(sut->stream_count(), 1U);
  EXPECT_EQ(free_chunks(*node_b)[1], free_before[1] - 8);  // the mirror's loans
}

TEST_F(InboundStreamsTest, MessagesArriveInOrderIntactInPlaceAndRegrantsComeInBatchesOfHalfTheCredits) {
  start(SubscriberQos{.depth = 16});
  open();
  ASSERT_EQ(credits(), 8U);

  const std::size_t grant_messages_after_open = stub.heard.size();
  for (std::uint32_t n = 1; n <= 40; ++n) {
    const std::uint64_t address = write(n, kLargest - n);
    EXPECT_EQ(credits(), 8U - (n % 4 == 0 ? 4 : n % 4)) << "after message " << n;
    // One GRANT of 4 after every fourth message, sent before the next poll of
    // the completion queue (not before the message is delivered): the
    // sender never has fewer than half.
    sut->before_poll();
    pump();
    EXPECT_EQ(credits(), n % 4 == 0 ? 8U : 8U - n % 4) << "after message " << n;
    expect_taken(n, address, kLargest - n);
  }
  EXPECT_EQ(stub.heard.size() - grant_messages_after_open, 10U) << "one GRANT per 4 messages, not one per message";

  EXPECT_TRUE(subscriber->take().empty());
  EXPECT_EQ(sut->counters().messages_delivered, 40U);
  EXPECT_EQ(sut->counters().grants_sent, 48U);
  EXPECT_EQ(link_b->failure(), "");
}

TEST_F(InboundStreamsTest, ASenderWithoutCreditLeftIsRegrantedAtOnce) {
  start(SubscriberQos{.depth = 16});
  open();
  ASSERT_EQ(credits(), 8U);
  for (std::uint32_t n = 1; n <= 8; ++n) {
    (void)write(n);  // no poll in between: the batch of 4 stays due
  }
  EXPECT_EQ(credits(), 8U) << "the eighth write left the sender nothing: its grants went out with it";
  for (std::uint32_t n = 1; n <= 8; ++n) {
    ASSERT_FALSE(subscriber->take().empty()) << "message " << n;
  }
}

TEST_F(InboundStreamsTest, MessagesQueuedAtTheSubscriberKeepTheirOrder) {
  start(SubscriberQos{.depth = 16});
  open();
  std::vector<std::uint64_t> addresses;

  for (std::uint32_t n = 1; n <= 12; ++n) {
    addresses.push_back(write(n));
  }

  for (std::uint32_t n = 1; n <= 12; ++n) {
    expect_taken(n, addresses[n - 1]);
  }
}

TEST_F(InboundStreamsTest, ASlowReliableSubscriberCapsGrantsAndTakingRefillsAfterWant) {
  start(SubscriberQos{.depth = 4, .reliability = Reliability::kReliable, .block_timeout_ns = 1'000'000'000});
  open();
  ASSERT_EQ(credits(), 4U) << "grants beyond the subscriber's free room";

  std::vector<std::uint64_t> addresses;
  for (std::uint32_t n = 1; n <= 4; ++n) {
    addresses.push_back(write(n));
  }

  EXPECT_EQ(credits(), 0U) << "the sender runs out instead of overrunning the queue";
  const SubscriberCounters full = subscriber->counters();
  EXPECT_EQ(full.queue.dropped_full + full.queue.dropped_timeout + full.queue.dropped_oldest, 0U);
  want(1);
  EXPECT_TRUE(sut->tick()) << "the sender waits and nothing could be granted: tick() must run again";
  pump();
  EXPECT_EQ(credits(), 0U) << "granted while the queue is still full";

  for (std::uint32_t n = 1; n <= 4; ++n) {
    expect_taken(n, addresses[n - 1]);
  }
  EXPECT_FALSE(sut->tick()) << "the WANT was answered by this tick's grants: nothing waits any more";
  pump();

  EXPECT_EQ(credits(), 4U);
  EXPECT_FALSE(sut->tick());
  for (std::uint32_t n = 5; n <= 8; ++n) {
    expect_taken(n, write(n));
  }
  EXPECT_EQ(sut->counters().messages_delivered, 8U);
}

TEST_F(InboundStreamsTest, WantZeroStopsTheRefillPoll) {
  start(SubscriberQos{.depth = 2, .reliability = Reliability::kReliable});
  open();
  const std::uint64_t first = write(1);
  const std::uint64_t second = write(2);
  ASSERT_EQ(credits(), 0U);
  want(3);
  want(0);

  expect_taken(1, first);
  expect_taken(2, second);
  sut->tick();
  pump();

  EXPECT_EQ(credits(), 0U) << "granted on tick() after WANT(0)";
  want(1);  // a WANT grants at once when there is room
  EXPECT_EQ(credits(), 2U);
}

TEST_F(InboundStreamsTest, AnExhaustedPoolIsCountedAndTickGrantsOnceChunksComeBack) {
  start(SubscriberQos{.depth = 64});
  open();
  ASSERT_EQ(credits(), 8U);
  // The subscriber holds every message: the 16 chunks of 4 KiB run out.
  std::vector<std::uint64_t> addresses;
  for (std::uint32_t n = 1; n <= 16; ++n) {
    addresses.push_back(write(n));
  }
  EXPECT_EQ(credits(), 0U);
  EXPECT_GT(sut->counters().loans_exhausted, 0U);
  want(1);

  for (std::uint32_t n = 1; n <= 16; ++n) {
    expect_taken(n, addresses[n - 1]);
  }
  sut->tick();
  pump();

  EXPECT_EQ(credits(), 8U);
}

TEST_F(InboundStreamsTest, GrantsOfAllStreamsOfALinkStayWithinTheLinksBudget) {
  start(SubscriberQos{.depth = 16}, InboundSettings{.credits = 8}, {{256, 128}, {4096, 16}});
  constexpr std::uint32_t kStreams = kLinkGrantBudget / 8 + 1;

  for (std::uint32_t stream = 1; stream <= kStreams; ++stream) {
    open(kTopicId, kTypeHash, stream, 100);
  }

  for (std::uint32_t stream = 1; stream < kStreams; ++stream) {
    EXPECT_EQ(credits(stream), 8U) << "stream " << stream;
  }
  EXPECT_EQ(credits(kStreams), 0U) << "granted beyond kLinkGrantBudget";
  EXPECT_EQ(stub.count(ControlKind::kOpen), kStreams);
  EXPECT_EQ(link_b->grants().outstanding(0), kLinkGrantBudget);
  want(1, kStreams);
  EXPECT_EQ(credits(kStreams), 0U);

  close(1);
  want(1, kStreams);

  EXPECT_EQ(credits(kStreams), 8U);
  EXPECT_EQ(link_b->grants().outstanding(0), kLinkGrantBudget);
}

TEST_F(InboundStreamsTest, AnUnknownTopicIsAnsweredWithCloseAndCounted) {
  start(SubscriberQos{});

  open(kTopicId + 1);

  ASSERT_EQ(stub.heard.size(), 1U);
  EXPECT_EQ(stub.heard[0].kind, ControlKind::kClose);
  EXPECT_EQ(stub.heard[0].stream_id, kStream);
  EXPECT_EQ(sut->counters().streams_refused, 1U);
  EXPECT_EQ(sut->counters().streams_opened, 0U);
  EXPECT_EQ(sut->stream_count(), 0U);
  EXPECT_EQ(free_chunks(*node_b), free_before);
}

TEST_F(InboundStreamsTest, AnotherTypeHashIsAnsweredWithCloseAndCounted) {
  start(SubscriberQos{});

  open(kTopicId, kTypeHash + 1);

  ASSERT_EQ(stub.heard.size(), 1U);
  EXPECT_EQ(stub.heard[0].kind, ControlKind::kClose);
  EXPECT_EQ(sut->counters().streams_refused, 1U);
  EXPECT_EQ(sut->stream_count(), 0U);
  EXPECT_EQ(subscriber->publisher_count(), 0U) << "a mirror was advertised";
}

TEST_F(InboundStreamsTest, StreamsOfThisNodesOwnAreLeftToTheSendHalf) {
  start(SubscriberQos{});

  // B accepted the link: ids with the passive bit are B's own streams.
  open(kTopicId, kTypeHash, first_stream_id(false));

  EXPECT_TRUE(stub.heard.empty());
  EXPECT_EQ(sut->stream_count(), 0U);
}

TEST_F(InboundStreamsTest, AWriteNamingASlotNotGrantedFailsTheLink) {
  start(SubscriberQos{});
  open();
  ASSERT_EQ(credits(), 8U);
  // Slot 9 of the 4 KiB class: the stream holds slots 0..7.
  GrantEntry& forged = stub.credits[kStream].front();
  forged.slot = 9;

  (void)write(1);

  EXPECT_NE(link_b->failure(), "");
  EXPECT_EQ(sut->counters().messages_delivered, 0U);
  lose();
  EXPECT_EQ(free_chunks(*node_b), free_before);
}

TEST_F(InboundStreamsTest, AWriteOfAStreamNotOpenOrAnotherChunkFailsTheLink) {
  start(SubscriberQos{});
  open();
  const GrantEntry grant = stub.credits[kStream].front();

  sut->on_write(*link_b, ResolvedWrite{.size_class = grant.size_class,
                                       .slot = grant.slot,
                                       .chunk_index = 0,  // the 256 B class's first chunk: never granted here
                                       .stream_id = kStream,
                                       .length = 10});
  EXPECT_NE(link_b->failure(), "");
  auto [other_a, other_b] =
      testing::LoopbackLink::make_pair(node_a->own_chunk_area(), 0xA1, node_b->own_chunk_area(), 0xB2);
  sut->on_write(
      *other_b,
      ResolvedWrite{
          .size_class = grant.size_class, .slot = grant.slot, .chunk_index = 0, .stream_id = kStream, .length = 10});

  EXPECT_NE(other_b->failure(), "");
  EXPECT_EQ(sut->counters().messages_delivered, 0U);
  lose();
  EXPECT_EQ(free_chunks(*node_b), free_before);
}

TEST_F(InboundStreamsTest, CloseGivesEveryChunkBackAndTheSubscriberSeesThePublisherLeave) {
  start(SubscriberQos{.depth = 16});
  open();
  for (std::uint32_t n = 1; n <= 3; ++n) {
    expect_taken(n, write(n));
  }
  ASSERT_EQ(subscriber->publisher_count(), 1U);

  close();

  EXPECT_EQ(sut->stream_count(), 0U);
  EXPECT_EQ(sut->counters().chunks_reclaimed, 8U);
  EXPECT_EQ(link_b->grants().outstanding(1), 0U);
  EXPECT_EQ(free_chunks(*node_b), free_before);
  EXPECT_TRUE(axon::test::eventually(
      [&] {
        (void)subscriber->has_data();  // rescans when the topic's publishers changed
        return subscriber->publishers_lost() == 1;
      },
      5000ms))
      << "the subscriber did not see the mirror leave";
}

TEST_F(InboundStreamsTest, LinkLossGivesEveryChunkBackAndTheSubscriberSeesThePublisherLeave) {
  start(SubscriberQos{.depth = 16});
  open();
  const std::uint64_t held = write(1);  // delivered, not taken yet
  ASSERT_TRUE(subscriber->has_data());  // the subscriber linked the mirror (a rescan)

  lose();

  EXPECT_EQ(sut->stream_count(), 0U);
  EXPECT_EQ(sut->counters().chunks_reclaimed, 8U);
  expect_taken(1, held);  // a delivered message stays the subscriber's
  EXPECT_EQ(free_chunks(*node_b), free_before);
  EXPECT_TRUE(axon::test::eventually(
      [&] {
        (void)subscriber->has_data();  // rescans when the topic's publishers changed
        return subscriber->publishers_lost() == 1;
      },
      5000ms))
      << "the subscriber did not see the mirror leave";
}

TEST_F(InboundStreamsTest, AFullSendQueueKeepsTheAnswerAndTheGrantForTick) {
  start(SubscriberQos{});
  link_b->set_control_room(0);

  open();
  EXPECT_TRUE(stub.heard.empty());
  link_b->set_control_room(1);  // room for the answer only
  sut->tick();
  pump();
  ASSERT_EQ(stub.heard.size(), 1U);
  EXPECT_EQ(stub.heard[0].kind, ControlKind::kOpen);
  link_b->set_control_room(static_cast<std::size_t>(-1));
  sut->tick();
  pump();

  ASSERT_EQ(stub.heard.size(), 2U);
  EXPECT_EQ(stub.heard[1].kind, ControlKind::kGrant);
  EXPECT_EQ(credits(), 8U);
  EXPECT_EQ(sut->counters().grants_sent, 8U);
}

TEST_F(InboundStreamsTest, AFullSendQueueKeepsARefusalForTick) {
  start(SubscriberQos{});
  link_b->set_control_room(0);

  open(kTopicId + 1);
  EXPECT_TRUE(stub.heard.empty());
  link_b->set_control_room(static_cast<std::size_t>(-1));
  sut->tick();
  pump();

  ASSERT_EQ(stub.heard.size(), 1U);
  EXPECT_EQ(stub.heard[0].kind, ControlKind::kClose);
}

TEST(InboundStreamsSettings, RefusesCreditsAndRefillPeriodOutOfRangeNamingTheKey) {
  axon::test::TempDir dir{"axon-inbound"};
  auto node = make_node(dir, 43, "receiver");
  ASSERT_NE(node, nullptr);
  const InboundLookup none = [](std::uint64_t) { return std::optional<InboundTopic>(); };

  for (const std::uint32_t credits : {0U, kLinkGrantBudget + 1}) {
    auto sut = InboundStreams::create(node, none, InboundSettings{.credits = credits});
    ASSERT_FALSE(sut.ok());
    EXPECT_NE(std::string(sut.error().message()).find("rdma.credits"), std::string::npos) << sut.error().message();
  }
  auto zero_poll = InboundStreams::create(node, none, InboundSettings{.refill_poll_us = 0});
  ASSERT_FALSE(zero_poll.ok());
  EXPECT_NE(std::string(zero_poll.error().message()).find("rdma.refill_poll_us"), std::string::npos);
  auto fine = InboundStreams::create(node, none, InboundSettings{.credits = kLinkGrantBudget, .refill_poll_us = 250});
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ((*fine)->refill_period(), std::chrono::microseconds(250));
}

}  // namespace
}  // namespace axon::rdma
