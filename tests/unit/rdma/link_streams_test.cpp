// Both halves of the RDMA streams on both ends of one link, on the host: two
// shared-memory nodes of one process, each with InboundStreams and
// OutboundStreams behind a LinkStreams, joined by a pair of loopback links
// (writes are memcpys into the granted chunks). A topic goes each way over
// the one link at once, so the stream ids of the two directions meet on it
// (link_port.hpp's rule) and LinkStreams must hand each message to its half.
// A thread plays the RDMA thread of both ends (pump, tick); the test's
// threads publish and take.
#include "transports/rdma/link_streams.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "tests/support/common/temp_dir.hpp"
#include "tests/support/eventually.hpp"
#include "tests/unit/rdma/loopback_link.hpp"
#include "transports/rdma/inbound_streams.hpp"
#include "transports/rdma/outbound_streams.hpp"
#include "transports/rdma/rdma_writer.hpp"
#include "transports/shm/shm_ports.hpp"
#include "transports/shm/shm_transport.hpp"

namespace axon::rdma {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kMessages = 400;
constexpr std::uint32_t kBytes = 1500;  // the 4 KiB class
constexpr std::uint32_t kCredits = 4;

TopicDescriptor topic(const char* name, std::uint64_t hash) {
  return TopicDescriptor{.name = name,
                         .type = TypeIdentity{.name = "bytes", .hash = hash, .size = 1, .align = 1},
                         .max_payload_bytes = 4096};
}

/// Reliable and patient: a publisher without credit waits for the grant
/// the delivery before it brings back (the machine may be loaded).
SubscriberQos reliable_qos() {
  return SubscriberQos{.history = History::kKeepAll,
                       .depth = 8,
                       .reliability = Reliability::kReliable,
                       .block_timeout_ns = 10'000'000'000};
}

InboundTopic inbound_topic(const TopicDescriptor& descriptor, const SubscriberQos& qos) {
  return InboundTopic{.descriptor = descriptor,
                      .reliability = WireReliability::kReliable,
                      .overflow = static_cast<WireOverflow>(qos.overflow),
                      .block_timeout_ns = static_cast<std::uint64_t>(qos.block_timeout_ns)};
}

std::vector<std::uint32_t> free_chunks(const shm::ShmTransport& node) {
  std::vector<std::uint32_t> free;
  for (const PoolClassStats& c : node.pool_stats()) {
    free.push_back(c.free_chunks);
  }
  return free;
}

/// One node: its pool, its two halves, the handler its link end gets.
struct End {
  End(const axon::test::TempDir& dir, std::uint32_t domain, const char* name, std::uint64_t received_topic_id,
      const TopicDescriptor& received) {
    auto created = shm::ShmTransport::create(shm::ShmConfig{
        .domain_id = domain, .node_name = name, .shm_dir = dir.path(), .chunk_classes = {{256, 16}, {4096, 32}}});
    EXPECT_TRUE(created.ok()) << created.error().message();
    node = std::move(*created);
    const InboundTopic wanted = inbound_topic(received, reliable_qos());
    auto streams = InboundStreams::create(
        node,
        [wanted, received_topic_id](std::uint64_t id) {
          return id == received_topic_id ? std::optional<InboundTopic>(wanted) : std::nullopt;
        },
        InboundSettings{.credits = kCredits});
    EXPECT_TRUE(streams.ok()) << streams.error().message();
    inbound = std::move(*streams);
    handler.emplace(*inbound, outbound);
  }

  std::shared_ptr<shm::ShmTransport> node;
  std::unique_ptr<InboundStreams> inbound;
  OutboundStreams outbound;
  std::optional<LinkStreams> handler;
};

/// The RDMA thread of both ends: pumps until stopped.
class Pump {
 public:
  Pump(testing::LoopbackLink& a, testing::LoopbackLink& b, End& end_a, End& end_b)
      : thread_([&a, &b, &end_a, &end_b, this] {
          while (!stop_.load(std::memory_order_acquire)) {  // pairs with stop()'s release
            const std::size_t events = a.pump() + b.pump();
            end_a.inbound->tick();
            end_b.inbound->tick();
            if (events == 0) {
              std::this_thread::sleep_for(50us);
            }
          }
        }) {}
  Pump(const Pump&) = delete;
  Pump& operator=(const Pump&) = delete;
  ~Pump() { stop(); }
  void stop() {
    stop_.store(true, std::memory_order_release);
    if (thread_.joinable()) {
      thread_.join();
    }
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::shared_ptr<shm::ShmPublisherPort> advertise(shm::ShmTransport& node, const TopicDescriptor& t) {
  auto port = node.advertise(t, PublisherQos{});
  EXPECT_TRUE(port.ok()) << port.error().message();
  return std::static_pointer_cast<shm::ShmPublisherPort>(std::move(*port));
}

/// Publishes kMessages, message i filled with byte (i + salt), through `writer`.
void publish_all(shm::ShmPublisherPort& port, RdmaWriter& writer, std::uint8_t salt, std::atomic<std::uint32_t>& lost) {
  for (std::uint32_t i = 0; i < kMessages; ++i) {
    auto chunk = port.loan(kBytes);
    if (!chunk) {
      lost.fetch_add(1, std::memory_order_relaxed);  // a statistic, read after join()
      continue;
    }
    std::memset(chunk->payload, static_cast<int>((i + salt) & 0xFFU), kBytes);
    const PublishResult result = writer.publish(*chunk, kBytes, 0);
    if (!result.ok() || result->delivered != 1) {
      lost.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

/// Takes kMessages from `sub`, checking order and bytes; false after 20 s
/// without a message.
bool take_all(SubscriberPort& sub, std::uint8_t salt, std::uint32_t& received, std::uint32_t& corrupt) {
  auto last = std::chrono::steady_clock::now();
  while (received < kMessages) {
    auto sample = sub.take();
    if (!sample) {
      if (std::chrono::steady_clock::now() - last > 20s) {
        return false;
      }
      std::this_thread::sleep_for(20us);
      continue;
    }
    last = std::chrono::steady_clock::now();
    const auto expected = static_cast<std::byte>((received + salt) & 0xFFU);
    bool intact = sample->info.payload_bytes == kBytes;
    for (std::uint32_t k = 0; intact && k < kBytes; ++k) {
      intact = sample->payload[k] == expected;
    }
    corrupt += intact ? 0 : 1;
    ++received;
    sub.release(*sample);
  }
  return true;
}

TEST(RdmaLinkStreams, ATopicEachWayOverOneLinkArrivesCompleteInOrderAndIntactAtBothEnds) {
  const axon::test::TempDir dir_a;
  const axon::test::TempDir dir_b;
  const TopicDescriptor a_to_b = topic("a_to_b", 0xA2B);
  const TopicDescriptor b_to_a = topic("b_to_a", 0xB2A);
  constexpr std::uint64_t kAToB = 11;
  constexpr std::uint64_t kBToA = 22;
  End a(dir_a, 61, "a", kBToA, b_to_a);
  End b(dir_b, 62, "b", kAToB, a_to_b);
  ASSERT_TRUE(a.node && b.node && a.inbound && b.inbound);

  auto sub_b = b.node->subscribe(a_to_b, reliable_qos());
  auto sub_a = a.node->subscribe(b_to_a, reliable_qos());
  ASSERT_TRUE(sub_a.ok() && sub_b.ok());
  auto pub_a = advertise(*a.node, a_to_b);
  auto pub_b = advertise(*b.node, b_to_a);
  ASSERT_TRUE(pub_a && pub_b);
  const std::vector<std::uint32_t> a_free = free_chunks(*a.node);
  const std::vector<std::uint32_t> b_free = free_chunks(*b.node);

  auto writer_a = std::make_shared<RdmaWriter>(
      pub_a, RdmaWriterFields{.topic_id = kAToB, .type_hash = 0xA2B, .writer_id = 1, .largest_message_bytes = kBytes},
      kCredits);
  auto writer_b = std::make_shared<RdmaWriter>(
      pub_b, RdmaWriterFields{.topic_id = kBToA, .type_hash = 0xB2A, .writer_id = 1, .largest_message_bytes = kBytes},
      kCredits);
  a.outbound.add_writer(writer_a);
  b.outbound.add_writer(writer_b);

  auto [link_a, link_b] =
      testing::LoopbackLink::make_pair(a.node->own_chunk_area(), 0xA, b.node->own_chunk_area(), 0xB);
  link_a->set_handler(&*a.handler);
  link_b->set_handler(&*b.handler);
  link_a->up();  // both ends: each half opens its writer's stream on the link
  // Before the receiver's answer a writer knows no QoS (it would drop): wait for both windows.
  for (int i = 0; i < 100 && (writer_a->credits_of(*link_a, a.outbound.stream_of(*link_a, *writer_a)) < kCredits ||
                              writer_b->credits_of(*link_b, b.outbound.stream_of(*link_b, *writer_b)) < kCredits);
       ++i) {
    (void)link_b->pump();
    (void)link_a->pump();
  }
  ASSERT_EQ(writer_a->credits_of(*link_a, a.outbound.stream_of(*link_a, *writer_a)), kCredits);
  ASSERT_EQ(writer_b->credits_of(*link_b, b.outbound.stream_of(*link_b, *writer_b)), kCredits);

  std::atomic<std::uint32_t> lost_a{0};
  std::atomic<std::uint32_t> lost_b{0};
  std::uint32_t received_a = 0;
  std::uint32_t received_b = 0;
  std::uint32_t corrupt_a = 0;
  std::uint32_t corrupt_b = 0;
  bool a_done = false;
  {
    Pump pump(*link_a, *link_b, a, b);
    std::thread publisher_a([&] { publish_all(*pub_a, *writer_a, 3, lost_a); });
    std::thread publisher_b([&] { publish_all(*pub_b, *writer_b, 7, lost_b); });
    std::thread taker_a([&] { a_done = take_all(**sub_a, 7, received_a, corrupt_a); });
    const bool b_done = take_all(**sub_b, 3, received_b, corrupt_b);
    publisher_a.join();
    publisher_b.join();
    taker_a.join();
    EXPECT_TRUE(b_done) << "B took " << received_b << " of " << kMessages;
  }
  EXPECT_TRUE(a_done) << "A took " << received_a << " of " << kMessages;
  EXPECT_EQ(lost_a.load(), 0U);
  EXPECT_EQ(lost_b.load(), 0U);
  EXPECT_EQ(received_b, kMessages);
  EXPECT_EQ(received_a, kMessages);
  EXPECT_EQ(corrupt_a + corrupt_b, 0U);
  EXPECT_EQ(link_a->failure(), "");
  EXPECT_EQ(link_b->failure(), "");
  EXPECT_EQ(b.inbound->counters().messages_delivered, kMessages);
  EXPECT_EQ(a.inbound->counters().messages_delivered, kMessages);
  EXPECT_EQ(writer_a->counters().messages_written, kMessages);
  EXPECT_EQ(writer_b->counters().messages_written, kMessages);
  EXPECT_EQ(a.outbound.counters().streams_refused + b.outbound.counters().streams_refused, 0U);

  // The link goes: every chunk either end granted or pinned comes back.
  link_a->lose();
  a.outbound.remove_writer(*writer_a);
  b.outbound.remove_writer(*writer_b);
  EXPECT_EQ(free_chunks(*a.node), a_free);
  EXPECT_EQ(free_chunks(*b.node), b_free);
  EXPECT_TRUE(axon::test::eventually(
      [&] {
        (void)(*sub_b)->has_data();  // rescans when the topic's publishers changed
        return (*sub_b)->publishers_lost() == 1;
      },
      5000ms))
      << "B's subscriber did not see the mirror of A's publisher leave";
}

TEST(RdmaLinkStreams, AStreamThePeerDoesNotReceiveIsRefusedAndCostsNoChunk) {
  const axon::test::TempDir dir_a;
  const axon::test::TempDir dir_b;
  const TopicDescriptor received = topic("received", 0x1);
  const TopicDescriptor other = topic("other", 0x2);
  End a(dir_a, 63, "a", 99, received);
  End b(dir_b, 64, "b", 1, received);  // B receives topic id 1 only
  ASSERT_TRUE(a.node && b.node);
  auto pub_a = advertise(*a.node, other);
  const std::vector<std::uint32_t> b_free = free_chunks(*b.node);
  auto writer = std::make_shared<RdmaWriter>(
      pub_a, RdmaWriterFields{.topic_id = 2, .type_hash = 0x2, .writer_id = 1, .largest_message_bytes = kBytes},
      kCredits);
  a.outbound.add_writer(writer);
  auto [link_a, link_b] =
      testing::LoopbackLink::make_pair(a.node->own_chunk_area(), 0xA, b.node->own_chunk_area(), 0xB);
  link_a->set_handler(&*a.handler);
  link_b->set_handler(&*b.handler);
  link_a->up();
  for (int i = 0; i < 4; ++i) {
    (void)link_b->pump();  // B: OPEN -> CLOSE
    (void)link_a->pump();  // A: the CLOSE
  }
  EXPECT_EQ(b.inbound->counters().streams_refused, 1U);
  EXPECT_EQ(a.outbound.counters().streams_refused, 1U);
  EXPECT_EQ(free_chunks(*b.node), b_free);
  auto chunk = pub_a->loan(kBytes);
  ASSERT_TRUE(chunk);
  const PublishResult result = writer->publish(*chunk, kBytes, 0);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->delivered, 0U);  // no destination: nothing written, nothing dropped for B
  EXPECT_EQ(link_a->writes_posted(), 0U);
  EXPECT_EQ(link_a->failure(), "");
  EXPECT_EQ(link_b->failure(), "");
  link_a->lose();
  a.outbound.remove_writer(*writer);
}

}  // namespace
}  // namespace axon::rdma
