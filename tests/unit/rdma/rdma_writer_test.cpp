// The send half of RDMA streams (rdma_writer.hpp, outbound_streams.hpp) on
// the host: two nodes' pools in one process, a LoopbackLink pair between
// them (a write is a memcpy into the granted chunk), node A's real publisher
// with an RdmaWriter and OutboundStreams as its link handler, and node B's
// receive side played by the test (OPEN answers, GRANTs of chunks it loans
// from its own pool, the writes checked where they landed).
#include "transports/rdma/rdma_writer.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/common/temp_dir.hpp"
#include "tests/unit/rdma/loopback_link.hpp"
#include "transports/rdma/outbound_streams.hpp"
#include "transports/shm/chunk_header.hpp"
#include "transports/shm/shm_transport.hpp"

namespace axon::rdma {
namespace {

using testing::LoopbackLink;

constexpr std::uint64_t kTopicId = 0x70F1C;
constexpr std::uint64_t kTypeHash = 0xBEEF;
constexpr std::uint32_t kWriterId = 3;
constexpr std::uint32_t kLargest = 4096;
constexpr std::uint32_t kSmallClass = 0;  // 256 bytes
constexpr std::uint32_t kLargeClass = 1;  // 4096 bytes

/// One node: its shared-memory transport and a publisher of the topic.
struct PoolNode {
  PoolNode(std::uint32_t domain, const char* name) {
    auto created = shm::ShmTransport::create(shm::ShmConfig{.domain_id = domain,
                                                            .node_name = name,
                                                            .shm_dir = dir.path(),
                                                            .chunk_classes = {{256, 8}, {4096, 4}},
                                                            .chunk_fallback = ChunkFallback{.max_classes = 0}});
    if (!created.ok()) {
      ADD_FAILURE() << created.error().message();
      return;
    }
    transport = std::move(*created);
    auto advertised = transport->advertise(topic, PublisherQos{});
    if (!advertised.ok()) {
      ADD_FAILURE() << advertised.error().message();
      return;
    }
    publisher = std::dynamic_pointer_cast<shm::ShmPublisherPort>(*advertised);
  }
  [[nodiscard]] std::uint32_t free_chunks(std::uint32_t size_class) const {
    return transport->pool_stats().at(size_class).free_chunks;
  }
  [[nodiscard]] std::uint32_t total_chunks(std::uint32_t size_class) const {
    return transport->pool_stats().at(size_class).total_chunks;
  }

  axon::test::TempDir dir{"axon-rdma-writer"};
  const TopicDescriptor topic{.name = "frames",
                              .type = TypeIdentity{.name = "bytes", .hash = kTypeHash, .size = 1, .align = 1},
                              .max_payload_bytes = kLargest};
  std::shared_ptr<shm::ShmTransport> transport;
  std::shared_ptr<shm::ShmPublisherPort> publisher;
};

/// Node B's receive side, by hand: what arrived, and chunks it grants.
class Receiver final : public LinkHandler {
 public:
  struct Write {
    ResolvedWrite resolved;
    std::vector<std::byte> bytes;
  };

  explicit Receiver(shm::ShmPublisherPort& port) : port_(port) {}
  ~Receiver() override {
    for (const auto& [key, chunk] : granted_) {
      port_.discard(chunk);  // granted and never written
    }
  }
  Receiver(const Receiver&) = delete;
  Receiver& operator=(const Receiver&) = delete;

  void on_link_up(LinkPort& /*link*/) noexcept override {}
  void on_control(LinkPort& /*link*/, const ControlMessage& message) noexcept override {
    controls.push_back(message);
    controls.back().grant = {};  // its entries point into a buffer that is reused
  }
  void on_write(LinkPort& link, const ResolvedWrite& write) noexcept override {
    const auto found = granted_.find(key(write.size_class, write.slot));
    if (found == granted_.end()) {
      ADD_FAILURE() << "a write into a slot the test did not grant";
      return;
    }
    const LoanedChunk chunk = found->second;
    granted_.erase(found);
    writes.push_back(
        Write{.resolved = write, .bytes = std::vector<std::byte>(chunk.payload, chunk.payload + write.length)});
    (void)link.grants().release(GrantRef{.size_class = write.size_class, .slot = write.slot});
    port_.discard(chunk);
    if (regrant_region.length != 0) {  // a receiver that re-grants after each delivery
      const GrantEntry entry = grant_chunk(link, write.stream_id, write.length);
      std::array<std::byte, kControlSlotBytes> message{};
      const std::size_t bytes = encode_grant(message, write.stream_id, std::span(&entry, 1), regrant_region);
      EXPECT_TRUE(link.send_control(std::span(message).first(bytes)).ok());
    }
  }
  void on_link_lost(LinkPort& link) noexcept override {
    link.grants().reclaim_all([&](const ReclaimedChunk& reclaimed) {
      const auto found = granted_.find(key(reclaimed.size_class, reclaimed.slot));
      if (found != granted_.end()) {
        port_.discard(found->second);
        granted_.erase(found);
      }
    });
    lost = true;
  }

  /// Loans a chunk of B's pool for `payload_bytes` and enters it in `link`'s grant table for `stream_id`.
  GrantEntry grant_chunk(LinkPort& link, std::uint32_t stream_id, std::uint32_t payload_bytes) {
    auto loan = port_.loan(payload_bytes);
    EXPECT_TRUE(loan.ok());
    const auto* header = static_cast<const shm::ChunkHeader*>(loan->handle);
    const GrantResult granted = link.grants().grant(header->size_class, header->chunk_index, stream_id);
    EXPECT_EQ(granted.status, GrantStatus::kGranted);
    granted_[key(header->size_class, granted.slot)] = *loan;
    return GrantEntry{.address = reinterpret_cast<std::uint64_t>(loan->payload),
                      .capacity_bytes = loan->capacity_bytes,
                      .slot = granted.slot,
                      .size_class = static_cast<std::uint8_t>(header->size_class)};
  }
  [[nodiscard]] std::size_t count(ControlKind kind) const {
    std::size_t n = 0;
    for (const ControlMessage& m : controls) {
      n += m.kind == kind ? 1 : 0;
    }
    return n;
  }
  [[nodiscard]] std::size_t granted_count() const { return granted_.size(); }

  std::vector<ControlMessage> controls;
  std::vector<Write> writes;
  bool lost = false;
  /// Nonzero: each write is followed by a GRANT of a new chunk (this node's own region).
  PeerRegion regrant_region;

 private:
  static std::uint64_t key(std::uint32_t size_class, std::uint32_t slot) {
    return (std::uint64_t{size_class} << 32) | slot;
  }
  shm::ShmPublisherPort& port_;
  std::map<std::uint64_t, LoanedChunk> granted_;
};

class RdmaWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(a.publisher, nullptr);
    ASSERT_NE(b.publisher, nullptr);
    auto pair = LoopbackLink::make_pair(a.transport->own_chunk_area(), 0xA, b.transport->own_chunk_area(), 0xB);
    link_a = std::move(pair.first);
    link_b = std::move(pair.second);
    receiver = std::make_unique<Receiver>(*b.publisher);
    outbound = std::make_unique<OutboundStreams>();
    link_a->set_handler(outbound.get());
    link_b->set_handler(receiver.get());
    sut = std::make_shared<RdmaWriter>(
        a.publisher,
        RdmaWriterFields{
            .topic_id = kTopicId, .type_hash = kTypeHash, .writer_id = kWriterId, .largest_message_bytes = kLargest},
        8);
    outbound->add_writer(sut);
    link_a->up();
    link_b->pump();  // the OPEN
    stream = outbound->stream_of(*link_a, *sut);
  }
  void TearDown() override {
    outbound.reset();  // CLOSEs while the links exist
    sut.reset();
  }

  /// B answers the OPEN with its host's QoS.
  void answer(WireReliability reliability, WireOverflow overflow, std::uint64_t block_timeout_ns = 0) {
    std::array<std::byte, kOpenBytes> message{};
    const std::size_t bytes = encode_open(message, stream,
                                          OpenFields{.topic_id = kTopicId,
                                                     .type_hash = kTypeHash,
                                                     .writer_id = kWriterId,
                                                     .largest_message_bytes = kLargest,
                                                     .reliability = reliability,
                                                     .overflow = overflow,
                                                     .block_timeout_ns = block_timeout_ns});
    ASSERT_GT(bytes, 0U);
    ASSERT_TRUE(link_b->send_control(std::span(message).first(bytes)).ok());
    link_a->pump();
  }
  /// B grants `count` chunks fitting `payload_bytes`, in one GRANT (A has not pumped it yet).
  std::vector<GrantEntry> send_grants(std::uint32_t count, std::uint32_t payload_bytes = 100) {
    std::vector<GrantEntry> entries;
    for (std::uint32_t i = 0; i < count; ++i) {
      entries.push_back(receiver->grant_chunk(*link_b, stream, payload_bytes));
    }
    send_grant_message(entries);
    return entries;
  }
  void send_grant_message(const std::vector<GrantEntry>& entries) {
    std::array<std::byte, kControlSlotBytes> message{};
    const std::size_t bytes = encode_grant(message, stream, entries, link_a->peer_region());
    ASSERT_GT(bytes, 0U);
    ASSERT_TRUE(link_b->send_control(std::span(message).first(bytes)).ok());
  }
  struct Published {
    PublishResult result;
    void* handle = nullptr;
  };
  /// Publishes `payload_bytes` of `fill` through the writer.
  Published publish(std::uint8_t fill, std::uint32_t payload_bytes = 100) {
    auto loan = a.publisher->loan(payload_bytes);
    EXPECT_TRUE(loan.ok());
    if (!loan.ok()) {
      return {.result = Error(ErrorCode::kInvalidArgument, "no loan"), .handle = nullptr};
    }
    std::memset(loan->payload, fill, payload_bytes);
    return {.result = sut->publish(*loan, payload_bytes, 0), .handle = loan->handle};
  }
  static bool all_bytes(const std::vector<std::byte>& bytes, std::uint8_t fill) {
    for (const std::byte b : bytes) {
      if (b != std::byte{fill}) {
        return false;
      }
    }
    return true;
  }
  /// Whether A's publisher can loan the chunk `handle` now (every chunk of its class loaned and given back).
  bool a_loans(const void* handle, std::uint32_t payload_bytes = 100) {
    std::vector<LoanedChunk> held;
    bool found = false;
    for (auto loan = a.publisher->loan(payload_bytes); loan.ok(); loan = a.publisher->loan(payload_bytes)) {
      found = found || loan->handle == handle;
      held.push_back(*loan);
    }
    for (const LoanedChunk& chunk : held) {
      a.publisher->discard(chunk);
    }
    return found;
  }

  PoolNode a{7, "sender"};
  PoolNode b{8, "receiver"};
  std::unique_ptr<LoopbackLink> link_a;
  std::unique_ptr<LoopbackLink> link_b;
  std::unique_ptr<Receiver> receiver;
  std::unique_ptr<OutboundStreams> outbound;
  std::shared_ptr<RdmaWriter> sut;
  std::uint32_t stream = 0;
};

TEST_F(RdmaWriterTest, OpensAStreamWithTheWritersFieldsWhenTheLinkComesUp) {
  EXPECT_EQ(stream, first_stream_id(true));
  ASSERT_EQ(receiver->controls.size(), 1U);
  const ControlMessage& open = receiver->controls[0];
  EXPECT_EQ(open.kind, ControlKind::kOpen);
  EXPECT_EQ(open.stream_id, stream);
  EXPECT_EQ(
      open.open,
      (OpenFields{
          .topic_id = kTopicId, .type_hash = kTypeHash, .writer_id = kWriterId, .largest_message_bytes = kLargest}));
  EXPECT_EQ(outbound->counters().streams_opened, 1U);
}

TEST_F(RdmaWriterTest, WritesEachMessageIntactIntoItsGrantedChunkWithTheGrantsImmediate) {
  answer(WireReliability::kBestEffort, WireOverflow::kRejectNewest);
  const std::vector<GrantEntry> grants = send_grants(2);
  link_a->pump();
  ASSERT_EQ(sut->credits_of(*link_a, stream), 2U);

  const Published first = publish(0x11, 100);
  const Published second = publish(0x22, 37);
  link_b->pump();

  ASSERT_TRUE(first.result.ok());
  ASSERT_TRUE(second.result.ok());
  EXPECT_EQ(first.result->delivered, 1U);
  EXPECT_EQ(second.result->delivered, 1U);
  ASSERT_EQ(receiver->writes.size(), 2U);
  const std::array<std::uint32_t, 2> lengths{100, 37};
  const std::array<std::uint8_t, 2> fills{0x11, 0x22};
  for (std::size_t i = 0; i < 2; ++i) {
    const Receiver::Write& write = receiver->writes[i];
    // The loopback resolved the immediate through B's grant table: class,
    // slot and length are what the writer encoded.
    EXPECT_EQ(write.resolved.size_class, grants[i].size_class);
    EXPECT_EQ(write.resolved.slot, grants[i].slot) << "the oldest credit first";
    EXPECT_EQ(write.resolved.stream_id, stream);
    EXPECT_EQ(write.resolved.length, lengths[i]);
    EXPECT_TRUE(all_bytes(write.bytes, fills[i])) << "message " << i;
  }
  const RdmaWriterCounters counters = sut->counters();
  EXPECT_EQ(counters.messages_written, 2U);
  EXPECT_EQ(counters.bytes_written, 137U);
  EXPECT_EQ(sut->credits_of(*link_a, stream), 0U);
  EXPECT_TRUE(link_a->failure().empty()) << link_a->failure();
  EXPECT_TRUE(link_b->failure().empty()) << link_b->failure();
}

TEST_F(RdmaWriterTest, TheSentChunkStaysPinnedUntilTheWritesCompletionAndIsReusableAfter) {
  answer(WireReliability::kBestEffort, WireOverflow::kRejectNewest);
  send_grants(1);
  link_a->pump();
  const std::uint32_t free_before = a.free_chunks(kSmallClass);

  const Published sent = publish(0x33);

  ASSERT_TRUE(sent.result.ok());
  EXPECT_EQ(a.publisher->pins_of(sent.handle), 1U);
  EXPECT_EQ(a.free_chunks(kSmallClass), free_before - 1) << "pinned while the card may read it";
  EXPECT_FALSE(a_loans(sent.handle));

  link_a->pump();  // the send completion

  EXPECT_EQ(a.publisher->pins_of(sent.handle), 0U);
  EXPECT_EQ(a.free_chunks(kSmallClass), free_before);
  EXPECT_TRUE(a_loans(sent.handle));
}

TEST_F(RdmaWriterTest, WithoutCreditABestEffortHostIsDroppedCountedAndToldOnceThatTheWriterWants) {
  answer(WireReliability::kBestEffort, WireOverflow::kDefault);
  const std::uint32_t free_before = a.free_chunks(kSmallClass);

  const Published first = publish(0x44);
  const Published second = publish(0x45);
  link_b->pump();

  ASSERT_TRUE(first.result.ok());
  EXPECT_EQ(first.result->dropped, 1U);
  EXPECT_EQ(first.result->delivered, 0U);
  EXPECT_EQ(second.result->dropped, 1U);
  EXPECT_EQ(link_a->writes_posted(), 0U);
  EXPECT_TRUE(receiver->writes.empty());
  EXPECT_EQ(sut->counters().credit_drops, 2U);
  EXPECT_EQ(receiver->count(ControlKind::kWant), 1U) << "one WANT until a GRANT comes";
  EXPECT_EQ(sut->counters().wants_sent, 1U);
  EXPECT_EQ(a.publisher->pins_of(first.handle), 0U);
  EXPECT_EQ(a.free_chunks(kSmallClass), free_before) << "nothing pinned for a dropped host";
}

TEST_F(RdmaWriterTest, KeepLastKeepsOnePendingMessageReplacesAnOlderOneAndWritesItWhenAGrantComes) {
  answer(WireReliability::kBestEffort, WireOverflow::kDropOldest);
  const std::uint32_t free_before = a.free_chunks(kSmallClass);

  const Published older = publish(0x55);
  const Published newer = publish(0x66);

  ASSERT_TRUE(older.result.ok());
  EXPECT_EQ(older.result->evicted, 0U);
  EXPECT_EQ(older.result->dropped, 0U);
  EXPECT_EQ(newer.result->evicted, 1U) << "the older pending message made room";
  EXPECT_EQ(a.publisher->pins_of(older.handle), 0U);
  EXPECT_EQ(a.publisher->pins_of(newer.handle), 1U) << "pending: pinned";
  EXPECT_EQ(a.free_chunks(kSmallClass), free_before - 1);
  EXPECT_EQ(link_a->writes_posted(), 0U);

  send_grants(2);
  link_a->pump();  // the GRANT: the pending message goes into its first grant
  link_b->pump();

  ASSERT_EQ(receiver->writes.size(), 1U);
  EXPECT_TRUE(all_bytes(receiver->writes[0].bytes, 0x66));
  EXPECT_EQ(sut->credits_of(*link_a, stream), 1U) << "the other grant is a credit";
  EXPECT_EQ(sut->counters().evicted, 1U);
  EXPECT_EQ(sut->counters().messages_written, 1U);
  link_a->pump();  // its completion
  EXPECT_EQ(a.free_chunks(kSmallClass), free_before);
}

TEST_F(RdmaWriterTest, BlockPublisherWaitsForAGrantFromTheRdmaThread) {
  answer(WireReliability::kReliable, WireOverflow::kBlockPublisher, 20'000'000'000);
  std::atomic<bool> granted{false};
  std::thread rdma_thread([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    send_grants(1);
    link_a->pump();
    granted.store(true);
  });

  const auto start = std::chrono::steady_clock::now();
  const Published sent = publish(0x77);
  const auto waited = std::chrono::steady_clock::now() - start;
  rdma_thread.join();
  link_b->pump();

  ASSERT_TRUE(sent.result.ok());
  EXPECT_TRUE(granted.load()) << "publish() returned before the grant";
  EXPECT_EQ(sent.result->delivered, 1U);
  EXPECT_EQ(sent.result->timed_out, 0U);
  EXPECT_GE(waited, std::chrono::milliseconds(90));
  EXPECT_LT(waited, std::chrono::seconds(15)) << "woken by the GRANT, not by the 20 s timeout";
  ASSERT_EQ(receiver->writes.size(), 1U);
  EXPECT_TRUE(all_bytes(receiver->writes[0].bytes, 0x77));
}

TEST_F(RdmaWriterTest, AMessagePublishedBeforeTheReceiverAnsweredWaitsForTheAnswerAndIsWritten) {
  std::thread rdma_thread([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    answer(WireReliability::kReliable, WireOverflow::kDefault, 20'000'000'000);
    send_grants(1);
    link_a->pump();
  });

  const auto start = std::chrono::steady_clock::now();
  const Published sent = publish(0x5A);
  const auto waited = std::chrono::steady_clock::now() - start;
  rdma_thread.join();
  link_b->pump();

  ASSERT_TRUE(sent.result.ok());
  EXPECT_EQ(sent.result->delivered, 1U) << "not dropped because the stream was still opening";
  EXPECT_EQ(sent.result->dropped, 0U);
  EXPECT_GE(waited, std::chrono::milliseconds(25));
  EXPECT_EQ(sut->counters().credit_drops, 0U);
  ASSERT_EQ(receiver->writes.size(), 1U);
  EXPECT_TRUE(all_bytes(receiver->writes[0].bytes, 0x5A));
}

// The answer came during the wait but brought no credit: from then on the
// receiver's QoS decides, not the wait for the answer (CI saw a message that
// waited for the answer counted as the receiver's block timeout).
TEST_F(RdmaWriterTest, AMessageWaitingWhenTheAnswerComesWithoutCreditThenWaitsAsTheReceiversBlockSays) {
  std::thread rdma_thread([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    answer(WireReliability::kReliable, WireOverflow::kBlockPublisher, 20'000'000'000);
    std::this_thread::sleep_for(std::chrono::nanoseconds(kOpenAnswerWaitNs + 50'000'000));
    send_grants(1);
    link_a->pump();
  });

  const auto start = std::chrono::steady_clock::now();
  const Published sent = publish(0x3C);
  const auto waited = std::chrono::steady_clock::now() - start;
  rdma_thread.join();
  link_b->pump();

  ASSERT_TRUE(sent.result.ok());
  EXPECT_EQ(sent.result->delivered, 1U) << "the receiver blocks publishers: the wait went on past the answer's";
  EXPECT_EQ(sent.result->dropped, 0U);
  EXPECT_EQ(sent.result->timed_out, 0U);
  EXPECT_GE(waited, std::chrono::nanoseconds(kOpenAnswerWaitNs + 40'000'000));
  ASSERT_EQ(receiver->writes.size(), 1U);
  EXPECT_TRUE(all_bytes(receiver->writes[0].bytes, 0x3C));
}

TEST_F(RdmaWriterTest, AMessageWaitingWhenABestEffortAnswerComesWithoutCreditIsDroppedAtOnceAsACreditDrop) {
  std::thread rdma_thread([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    answer(WireReliability::kBestEffort, WireOverflow::kDefault);
  });

  const auto start = std::chrono::steady_clock::now();
  const Published sent = publish(0x3D);
  const auto waited = std::chrono::steady_clock::now() - start;
  rdma_thread.join();

  ASSERT_TRUE(sent.result.ok());
  EXPECT_EQ(sent.result->dropped, 1U);
  EXPECT_EQ(sent.result->timed_out, 0U);
  EXPECT_EQ(sut->counters().credit_drops, 1U);
  EXPECT_EQ(sut->counters().timed_out, 0U);
  EXPECT_LT(waited, std::chrono::nanoseconds(kOpenAnswerWaitNs)) << "woken by the answer";
  EXPECT_EQ(a.publisher->pins_of(sent.handle), 0U);
}

TEST_F(RdmaWriterTest, AReceiverThatNeverAnswersCostsThePublisherOneBoundedWaitThenDropsAreCounted) {
  const std::uint32_t free_before = a.free_chunks(kSmallClass);

  const auto start = std::chrono::steady_clock::now();
  const Published first = publish(0x61);
  const auto waited = std::chrono::steady_clock::now() - start;
  const Published second = publish(0x62);
  const auto both = std::chrono::steady_clock::now() - start;

  ASSERT_TRUE(first.result.ok());
  EXPECT_EQ(first.result->dropped, 1U);
  EXPECT_EQ(first.result->timed_out, 0U) << "no receiver's block timeout ran out: it never answered";
  EXPECT_GE(waited, std::chrono::nanoseconds(kOpenAnswerWaitNs - 5'000'000));
  ASSERT_TRUE(second.result.ok());
  EXPECT_EQ(second.result->dropped, 1U) << "past the wait for the answer, the host is dropped at once";
  EXPECT_EQ(second.result->timed_out, 0U);
  EXPECT_LT(both - waited, std::chrono::nanoseconds(kOpenAnswerWaitNs / 2));
  EXPECT_EQ(sut->counters().timed_out, 0U);
  EXPECT_EQ(sut->counters().credit_drops, 2U) << "both dropped for want of an answer";
  EXPECT_EQ(a.publisher->pins_of(first.handle), 0U);
  EXPECT_EQ(a.free_chunks(kSmallClass), free_before);
  EXPECT_EQ(link_a->writes_posted(), 0U);
}

TEST_F(RdmaWriterTest, BlockPublisherGivesUpAfterTheReceiversTimeout) {
  answer(WireReliability::kReliable, WireOverflow::kDefault, 50'000'000);
  const std::uint32_t free_before = a.free_chunks(kSmallClass);

  const auto start = std::chrono::steady_clock::now();
  const Published sent = publish(0x88);
  const auto waited = std::chrono::steady_clock::now() - start;

  ASSERT_TRUE(sent.result.ok());
  EXPECT_EQ(sent.result->timed_out, 1U);
  EXPECT_EQ(sent.result->dropped, 1U);
  EXPECT_EQ(sent.result->delivered, 0U);
  EXPECT_GE(waited, std::chrono::milliseconds(45));
  EXPECT_LT(waited, std::chrono::seconds(10));
  EXPECT_EQ(sut->counters().timed_out, 1U);
  EXPECT_EQ(a.publisher->pins_of(sent.handle), 0U);
  EXPECT_EQ(a.free_chunks(kSmallClass), free_before);
  EXPECT_EQ(link_a->writes_posted(), 0U);
}

TEST_F(RdmaWriterTest, ADuplicateGrantFailsTheLink) {
  const std::vector<GrantEntry> grants = send_grants(1);
  send_grant_message(grants);  // the same slot again while it is outstanding

  link_a->pump();

  EXPECT_NE(link_a->failure().find("duplicate"), std::string::npos) << link_a->failure();
}

TEST_F(RdmaWriterTest, ALostLinkForgetsTheCreditsUnpinsThePendingMessageAndGivesEveryChunkBack) {
  answer(WireReliability::kBestEffort, WireOverflow::kDropOldest);
  // A message of the large class waits; B grants small chunks, which it does not fit.
  const Published pending = publish(0x99, 1000);
  const std::vector<GrantEntry> grants = send_grants(2, 100);
  link_a->pump();
  ASSERT_EQ(sut->credits_of(*link_a, stream), 2U);
  ASSERT_EQ(a.publisher->pins_of(pending.handle), 1U);
  ASSERT_TRUE(link_a->granted_slots().outstanding(grants[0].size_class, grants[0].slot));

  link_a->lose();

  EXPECT_FALSE(link_a->granted_slots().outstanding(grants[0].size_class, grants[0].slot)) << "credits forgotten";
  EXPECT_FALSE(link_a->granted_slots().outstanding(grants[1].size_class, grants[1].slot));
  EXPECT_EQ(sut->credits_of(*link_a, stream), 0U);
  EXPECT_EQ(outbound->stream_of(*link_a, *sut), 0U);
  EXPECT_EQ(sut->counters().pending_dropped, 1U);
  EXPECT_EQ(a.publisher->pins_of(pending.handle), 0U);
  EXPECT_EQ(a.free_chunks(kSmallClass), a.total_chunks(kSmallClass));
  EXPECT_EQ(a.free_chunks(kLargeClass), a.total_chunks(kLargeClass));
  EXPECT_TRUE(receiver->lost);
  EXPECT_EQ(b.free_chunks(kSmallClass), b.total_chunks(kSmallClass)) << "B reclaimed what it granted";

  const Published after = publish(0xAA);
  EXPECT_EQ(after.result->dropped, 0U) << "no destination left";
  EXPECT_EQ(link_a->writes_posted(), 0U);
}

TEST_F(RdmaWriterTest, ABlockedPublisherIsWokenWhenItsLinkIsLost) {
  answer(WireReliability::kReliable, WireOverflow::kBlockPublisher, 20'000'000'000);
  std::thread rdma_thread([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    link_a->lose();
  });

  const auto start = std::chrono::steady_clock::now();
  const Published sent = publish(0xBB);
  const auto waited = std::chrono::steady_clock::now() - start;
  rdma_thread.join();

  ASSERT_TRUE(sent.result.ok());
  EXPECT_EQ(sent.result->dropped, 1U);
  EXPECT_EQ(sent.result->timed_out, 0U);
  EXPECT_LT(waited, std::chrono::seconds(15)) << "woken by the loss, not by the 20 s timeout";
  EXPECT_EQ(a.publisher->pins_of(sent.handle), 0U);
  EXPECT_EQ(a.free_chunks(kSmallClass), a.total_chunks(kSmallClass));
}

TEST_F(RdmaWriterTest, AStreamTheReceiverClosesGetsNothingMore) {
  std::array<std::byte, kCloseBytes> message{};
  ASSERT_GT(encode_close(message, stream), 0U);
  ASSERT_TRUE(link_b->send_control(message).ok());
  link_a->pump();

  EXPECT_EQ(outbound->counters().streams_refused, 1U);
  EXPECT_EQ(outbound->stream_of(*link_a, *sut), 0U);
  const Published after = publish(0xCC);
  EXPECT_EQ(after.result->dropped, 0U);
  EXPECT_EQ(receiver->count(ControlKind::kWant), 0U);

  // A GRANT still in flight for it is ignored, not a broken peer.
  send_grants(1);
  link_a->pump();
  EXPECT_TRUE(link_a->failure().empty()) << link_a->failure();
  EXPECT_EQ(outbound->counters().late_messages, 1U);
}

TEST_F(RdmaWriterTest, RemovingTheWriterClosesItsStream) {
  outbound->remove_writer(*sut);
  link_b->pump();

  EXPECT_EQ(receiver->count(ControlKind::kClose), 1U);
  EXPECT_EQ(outbound->stream_of(*link_a, *sut), 0U);
}

TEST_F(RdmaWriterTest, OneChunkWrittenToTwoHostsStaysPinnedUntilBothWritesCompleted) {
  // A third node, C, on a second link of A.
  PoolNode c{9, "second"};
  ASSERT_NE(c.publisher, nullptr);
  auto pair = LoopbackLink::make_pair(a.transport->own_chunk_area(), 0xA, c.transport->own_chunk_area(), 0xC);
  Receiver receiver_c(*c.publisher);
  pair.first->set_handler(outbound.get());
  pair.second->set_handler(&receiver_c);
  pair.first->up();
  pair.second->pump();
  const std::uint32_t stream_c = outbound->stream_of(*pair.first, *sut);
  ASSERT_EQ(stream_c, first_stream_id(true)) << "each link numbers its own streams";
  answer(WireReliability::kBestEffort, WireOverflow::kRejectNewest);
  send_grants(1);
  link_a->pump();
  const GrantEntry grant_c = receiver_c.grant_chunk(*pair.second, stream_c, 100);
  std::array<std::byte, kControlSlotBytes> message{};
  const std::size_t bytes = encode_grant(message, stream_c, std::span(&grant_c, 1), pair.first->peer_region());
  ASSERT_TRUE(pair.second->send_control(std::span(message).first(bytes)).ok());
  pair.first->pump();
  const std::uint32_t free_before = a.free_chunks(kSmallClass);

  const Published sent = publish(0xDD);

  ASSERT_TRUE(sent.result.ok());
  EXPECT_EQ(sent.result->delivered, 2U);
  EXPECT_EQ(a.publisher->pins_of(sent.handle), 2U) << "one pin per write";
  link_a->pump();  // B's write completed
  EXPECT_EQ(a.publisher->pins_of(sent.handle), 1U);
  EXPECT_EQ(a.free_chunks(kSmallClass), free_before - 1) << "C's write may still read it";
  EXPECT_FALSE(a_loans(sent.handle));
  pair.first->pump();  // C's write completed
  EXPECT_EQ(a.publisher->pins_of(sent.handle), 0U);
  EXPECT_EQ(a.free_chunks(kSmallClass), free_before);
  link_b->pump();
  pair.second->pump();
  ASSERT_EQ(receiver->writes.size(), 1U);
  ASSERT_EQ(receiver_c.writes.size(), 1U);
  EXPECT_TRUE(all_bytes(receiver->writes[0].bytes, 0xDD));
  EXPECT_TRUE(all_bytes(receiver_c.writes[0].bytes, 0xDD));

  pair.first->lose();  // before the link and C go
}

TEST_F(RdmaWriterTest, ABlockingStreamCarriesEveryMessageInOrderWhileTheRdmaThreadRegrants) {
  constexpr std::uint32_t kMessages = 3000;
  answer(WireReliability::kReliable, WireOverflow::kBlockPublisher, 5'000'000'000);
  receiver->regrant_region = link_a->peer_region();
  send_grants(4);
  std::atomic<bool> all_published{false};
  std::thread rdma_thread([&] {  // the only reader of receiver->writes until it is joined
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!(all_published.load() && receiver->writes.size() == kMessages) &&
           std::chrono::steady_clock::now() < give_up) {
      if (link_a->pump() + link_b->pump() == 0) {
        std::this_thread::yield();
      }
    }
  });

  std::uint32_t delivered = 0;
  const auto publish_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (std::uint32_t i = 0; i < kMessages; ++i) {
    if (std::chrono::steady_clock::now() > publish_deadline) {
      ADD_FAILURE() << "60 s and only " << i << " messages published: a wait missed its GRANT";
      break;
    }
    auto loan = a.publisher->loan(100);
    ASSERT_TRUE(loan.ok()) << "message " << i;
    std::memcpy(loan->payload, &i, sizeof(i));
    const PublishResult result = sut->publish(*loan, 100, 0);
    ASSERT_TRUE(result.ok());
    delivered += result->delivered;
  }
  all_published.store(true);
  rdma_thread.join();
  link_a->pump();

  EXPECT_EQ(delivered, kMessages) << "every publish waited for its credit";
  ASSERT_EQ(receiver->writes.size(), kMessages);
  for (std::uint32_t i = 0; i < kMessages; ++i) {
    std::uint32_t sequence = 0;
    std::memcpy(&sequence, receiver->writes[i].bytes.data(), sizeof(sequence));
    ASSERT_EQ(sequence, i) << "in publish order";
  }
  EXPECT_EQ(sut->counters().timed_out, 0U);
  EXPECT_TRUE(link_a->failure().empty()) << link_a->failure();
  EXPECT_EQ(a.free_chunks(kSmallClass), a.total_chunks(kSmallClass)) << "every pin given back";
}

TEST_F(RdmaWriterTest, ALinkLostWhilePublishingLeavesNoPinAndNoDestination) {
  answer(WireReliability::kBestEffort, WireOverflow::kDropOldest);
  receiver->regrant_region = link_a->peer_region();
  send_grants(4);
  std::atomic<bool> stop{false};
  std::atomic<std::uint32_t> published{0};
  std::thread publisher([&] {
    while (!stop.load()) {
      auto loan = a.publisher->loan(100);
      if (loan.ok()) {
        (void)sut->publish(*loan, 100, 0);
        published.fetch_add(1);
      }
    }
  });
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (std::chrono::steady_clock::now() < until) {
    link_b->pump();
    link_a->pump();  // last: only B's pump sends to A, so A's inbox is empty at the loss
  }
  link_a->lose();  // on this "RDMA thread", while the publisher runs
  const std::size_t posted_by_the_loss = link_a->writes_posted();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stop.store(true);
  publisher.join();
  // Writes the publisher posted while lose() ran (before on_link_lost() or
  // while it waited for the publisher to leave its section): the loopback
  // still completes them (a real link's queue pair is gone by then: it
  // refuses the post and unpins).
  (void)link_a->pump();

  EXPECT_EQ(link_a->writes_posted(), posted_by_the_loss) << "nothing posted once the loss was handled";
  EXPECT_GT(published.load(), 0U);
  EXPECT_EQ(outbound->stream_of(*link_a, *sut), 0U);
  EXPECT_GT(sut->counters().messages_written, 0U);
  EXPECT_EQ(a.free_chunks(kSmallClass), a.total_chunks(kSmallClass)) << "every pin given back";
}

TEST_F(RdmaWriterTest, AWriterSendsOnlyToThePeersItIsGivenAndFollowsTheirChanges) {
  auto second = std::make_shared<RdmaWriter>(
      a.publisher,
      RdmaWriterFields{
          .topic_id = kTopicId, .type_hash = kTypeHash, .writer_id = kWriterId + 1, .largest_message_bytes = kLargest},
      8);
  const std::size_t opens = receiver->count(ControlKind::kOpen);
  outbound->add_writer(second, std::vector<std::uint64_t>{});
  link_b->pump();
  EXPECT_EQ(outbound->stream_of(*link_a, *second), 0U) << "no peer receives its topic yet";
  EXPECT_EQ(receiver->count(ControlKind::kOpen), opens);

  outbound->set_peers(*second, {0xB});  // B's participant now receives the topic
  link_b->pump();
  const std::uint32_t opened = outbound->stream_of(*link_a, *second);
  EXPECT_NE(opened, 0U);
  ASSERT_EQ(receiver->count(ControlKind::kOpen), opens + 1);
  EXPECT_EQ(receiver->controls.back().open.writer_id, kWriterId + 1);

  outbound->set_peers(*second, {0xB});  // unchanged: nothing sent
  link_b->pump();
  EXPECT_EQ(receiver->count(ControlKind::kOpen), opens + 1);

  const std::size_t closes = receiver->count(ControlKind::kClose);
  outbound->set_peers(*second, {0xC});  // B no longer receives it (another host's participant does)
  link_b->pump();
  EXPECT_EQ(outbound->stream_of(*link_a, *second), 0U);
  ASSERT_EQ(receiver->count(ControlKind::kClose), closes + 1);
  EXPECT_EQ(receiver->controls.back().stream_id, opened);

  outbound->set_peers(*second, {0xB});  // back: a new stream, never the old id
  link_b->pump();
  EXPECT_NE(outbound->stream_of(*link_a, *second), 0U);
  EXPECT_NE(outbound->stream_of(*link_a, *second), opened);
  EXPECT_NE(outbound->stream_of(*link_a, *sut), 0U) << "the first writer (every link) keeps its stream";
  outbound->remove_writer(*second);
}

// A host discovery names is reached once its link is up and the stream
// opened: a message published in between waits for that (up to
// kOpenAnswerWaitNs after the host was named, as one published before the
// receiver's answer does), and is dropped and counted only past it.
TEST_F(RdmaWriterTest, AMessageForAPeerDiscoveryNamedButNeverReachedWaitsThenIsCountedDropped) {
  answer(WireReliability::kBestEffort, WireOverflow::kRejectNewest);
  auto second = std::make_shared<RdmaWriter>(
      a.publisher,
      RdmaWriterFields{
          .topic_id = kTopicId, .type_hash = kTypeHash, .writer_id = kWriterId + 1, .largest_message_bytes = kLargest},
      8);
  outbound->add_writer(second, std::vector<std::uint64_t>{0xC});  // a host whose link never comes up here

  auto loan = a.publisher->loan(100);
  ASSERT_TRUE(loan.ok());
  const auto start = std::chrono::steady_clock::now();
  const PublishResult sent = second->publish(*loan, 100, 0);
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(sent.ok());
  EXPECT_GE(waited, std::chrono::nanoseconds(kOpenAnswerWaitNs - 10'000'000)) << "not dropped before its wait ran out";
  EXPECT_EQ(sent->dropped, 1U) << "the host discovery named got nothing: counted, not silent";
  EXPECT_EQ(sent->delivered, 0U);
  EXPECT_EQ(second->counters().no_stream_drops, 1U);
  EXPECT_EQ(a.publisher->pins_of(loan->handle), 0U);

  auto again = a.publisher->loan(100);
  ASSERT_TRUE(again.ok());
  const auto second_start = std::chrono::steady_clock::now();
  const PublishResult later = second->publish(*again, 100, 0);
  const auto second_wait = std::chrono::steady_clock::now() - second_start;
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->dropped, 1U);
  EXPECT_EQ(second->counters().no_stream_drops, 2U);
  EXPECT_LT(second_wait, std::chrono::nanoseconds(kOpenAnswerWaitNs)) << "the host's wait ran out once, for good";

  outbound->set_peers(*second, {0xB});  // now a peer with a link: a stream, nothing unreached
  link_b->pump();
  auto next = a.publisher->loan(100);
  ASSERT_TRUE(next.ok());
  const PublishResult opening = second->publish(*next, 100, 0);  // waits for the answer that never comes here
  ASSERT_TRUE(opening.ok());
  EXPECT_EQ(second->counters().no_stream_drops, 2U) << "a peer with a stream is not counted unreached";
  outbound->remove_writer(*second);
}

TEST_F(RdmaWriterTest, AMessagePublishedWhileANamedHostsLinkComesUpWaitsForItsStreamAndIsWritten) {
  auto pair = LoopbackLink::make_pair(a.transport->own_chunk_area(), 0xA, b.transport->own_chunk_area(), 0xB);
  Receiver late_receiver(*b.publisher);
  auto late_outbound = std::make_unique<OutboundStreams>();
  pair.first->set_handler(late_outbound.get());
  pair.second->set_handler(&late_receiver);
  auto writer = std::make_shared<RdmaWriter>(
      a.publisher,
      RdmaWriterFields{
          .topic_id = kTopicId, .type_hash = kTypeHash, .writer_id = kWriterId + 1, .largest_message_bytes = kLargest},
      8);
  late_outbound->add_writer(writer, std::vector<std::uint64_t>{0xB});  // named; its link is still connecting

  std::thread rdma_thread([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    pair.first->up();  // the link is up: the writer's stream opens (OPEN)
    pair.second->pump();
    const std::uint32_t id = late_outbound->stream_of(*pair.first, *writer);
    std::array<std::byte, kOpenBytes> open{};
    const std::size_t open_bytes = encode_open(open, id,
                                               OpenFields{.topic_id = kTopicId,
                                                          .type_hash = kTypeHash,
                                                          .writer_id = kWriterId + 1,
                                                          .largest_message_bytes = kLargest,
                                                          .reliability = WireReliability::kReliable,
                                                          .overflow = WireOverflow::kDefault,
                                                          .block_timeout_ns = 20'000'000'000});
    EXPECT_TRUE(pair.second->send_control(std::span(open).first(open_bytes)).ok());
    const GrantEntry entry = late_receiver.grant_chunk(*pair.second, id, 100);
    std::array<std::byte, kControlSlotBytes> grant{};
    const std::size_t grant_bytes = encode_grant(grant, id, std::span(&entry, 1), pair.first->peer_region());
    EXPECT_TRUE(pair.second->send_control(std::span(grant).first(grant_bytes)).ok());
    pair.first->pump();  // the answer and the grant
  });

  auto loan = a.publisher->loan(100);
  ASSERT_TRUE(loan.ok());
  std::memset(loan->payload, 0x6B, 100);
  const auto start = std::chrono::steady_clock::now();
  const PublishResult sent = writer->publish(*loan, 100, 0);
  const auto waited = std::chrono::steady_clock::now() - start;
  rdma_thread.join();
  pair.second->pump();  // the write

  ASSERT_TRUE(sent.ok());
  EXPECT_EQ(sent->delivered, 1U) << "not dropped because the host's link was still connecting";
  EXPECT_EQ(sent->dropped, 0U);
  EXPECT_EQ(writer->counters().no_stream_drops, 0U);
  EXPECT_GE(waited, std::chrono::milliseconds(25));
  ASSERT_EQ(late_receiver.writes.size(), 1U);
  EXPECT_TRUE(all_bytes(late_receiver.writes[0].bytes, 0x6B));
  pair.first->pump();  // the write's completion unpins the chunk
  late_outbound->remove_writer(*writer);
  late_outbound.reset();
}

TEST(RdmaNoCreditPolicy, FollowsTheReceiversOverflowAndReliability) {
  EXPECT_EQ(no_credit_policy({}), NoCreditPolicy::kDrop) << "an answer of a best-effort host with no overflow named";
  EXPECT_EQ(no_credit_policy({.reliability = WireReliability::kReliable}), NoCreditPolicy::kBlock);
  EXPECT_EQ(no_credit_policy({.overflow = WireOverflow::kDropOldest}), NoCreditPolicy::kKeepLast);
  EXPECT_EQ(no_credit_policy({.overflow = WireOverflow::kLatestOnly}), NoCreditPolicy::kKeepLast);
  EXPECT_EQ(no_credit_policy({.overflow = WireOverflow::kRejectNewest}), NoCreditPolicy::kDrop);
  EXPECT_EQ(no_credit_policy({.overflow = WireOverflow::kBlockPublisher}), NoCreditPolicy::kBlock);
}

}  // namespace
}  // namespace axon::rdma
