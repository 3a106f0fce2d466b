// The verbs data plane over one connected RC queue pair (docs/design/
// rdma-transport.md, "The immediate value", "Control messages",
// "Completions"), on the Soft-RoCE guest's rxe0: control messages through
// the control rings, a 16 MiB message as a chain of writes, the flush of a
// queue pair in error, and the completion channel. One process, two ends of
// one rdma_cm connection (cm_pair.hpp: 10.0.2.15 -> 10.0.2.16). Skipped
// unless AXON_RDMA_EXPECT_DEVICE names the device (ctest rdma.softroce_devices).
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <string_view>
#include <vector>

#include "tests/unit/rdma/cm_pair.hpp"
#include "transports/rdma/completion_queue.hpp"
#include "transports/rdma/control_message.hpp"
#include "transports/rdma/grant_table.hpp"
#include "transports/rdma/immediate.hpp"
#include "transports/rdma/post_write.hpp"

namespace axon::rdma {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kMiB = std::uint32_t{1} << 20;
constexpr std::size_t kSmallRegionBytes = 64 * 1024;
constexpr milliseconds kWait{10000};

// Polls `cq` until `want` completions came or `timeout` passed.
std::vector<Completion> poll_for(CompletionQueue& cq, std::size_t want, milliseconds timeout) {
  std::vector<Completion> done;
  const auto until = Clock::now() + timeout;
  std::array<Completion, kPollBatch> batch{};
  while (done.size() < want && Clock::now() < until) {
    auto n = cq.poll(batch);
    if (!n.ok()) {
      ADD_FAILURE() << n.error().message();
      break;
    }
    done.insert(done.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(n.value()));
  }
  return done;
}

// Takes a send slot of `end`, encodes into it, SENDs it.
void send_control(test::CmEnd& end, const std::function<std::size_t(std::span<std::byte>)>& encode) {
  const auto slot = end.ring->try_take_send_slot();
  ASSERT_TRUE(slot) << "no free send slot";
  const std::size_t bytes = encode(slot->bytes);
  ASSERT_NE(bytes, 0U);
  auto posted = end.ring->post_send(end.qp(), end.budget, slot->slot, bytes);
  ASSERT_TRUE(posted.ok()) << posted.error().message();
  EXPECT_EQ(posted.value(), SendOutcome::kPosted);
}

// Receives `count` control messages on `end`, parses each against the
// peer's region, posts its slot again.
std::vector<ControlMessage> receive_control(test::CmEnd& end, std::size_t count, const PeerRegion& peer) {
  std::vector<ControlMessage> messages;
  for (const Completion& c : poll_for(*end.recv_cq, count, kWait)) {
    EXPECT_EQ(c.kind, CompletionKind::kControlReceived) << c.status_words;
    const auto bytes = end.ring->received(c.slot(), c.byte_len);
    if (!bytes) {
      ADD_FAILURE() << "slot " << c.slot() << " byte_len " << c.byte_len;
      continue;
    }
    ControlMessage m;
    EXPECT_EQ(parse_control(*bytes, peer, m), ControlError::kOk);
    messages.push_back(m);
    EXPECT_TRUE(end.ring->repost_receive(end.qp(), c.slot()).ok());
  }
  EXPECT_EQ(messages.size(), count);
  return messages;
}

// Waits for `count` send completions of `end` and frees what they name.
void complete_sends(test::CmEnd& end, std::size_t count) {
  const auto done = poll_for(*end.send_cq, count, kWait);
  ASSERT_EQ(done.size(), count);
  for (const Completion& c : done) {
    ASSERT_EQ(c.kind, CompletionKind::kSendCompleted) << c.status_words;
    if (c.work.kind == WorkKind::kControlSend) {
      EXPECT_TRUE(end.ring->send_completed(c.slot()));
    }
    end.budget.retire(c.work.sequence);
  }
}

class RdmaDataPlaneOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = std::getenv("AXON_RDMA_EXPECT_DEVICE");  // NOLINT(concurrency-mt-unsafe): single-threaded
    if (device_ == nullptr) {
      GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
    }
  }
  // Both ends with a region of `region_bytes`, connected.
  void connect(std::size_t region_bytes, bool post_b_receives = true) {
    const auto start = Clock::now();
    ASSERT_EQ(pair_.connect(device_, region_bytes, post_b_receives), "");
    std::printf("connected (regions of %zu KiB) in %lld ms\n", region_bytes / 1024,
                static_cast<long long>(std::chrono::duration_cast<milliseconds>(Clock::now() - start).count()));
  }
  const char* device_ = nullptr;
  test::CmPair pair_;
};

TEST_F(RdmaDataPlaneOnDevice, OpenGrantWantCloseRoundTripThroughTheControlRings) {
  ASSERT_NO_FATAL_FAILURE(connect(kSmallRegionBytes));
  test::CmEnd& a = pair_.a;
  test::CmEnd& b = pair_.b;
  const OpenFields open{.topic_id = 0x70, .type_hash = 0x7E, .writer_id = 3, .largest_message_bytes = 4096};
  const std::array<GrantEntry, 2> grants{
      GrantEntry{.address = b.region().base + 4096, .capacity_bytes = 4096, .slot = 0, .size_class = 1},
      GrantEntry{.address = b.region().base + 8192, .capacity_bytes = 4096, .slot = 1, .size_class = 1}};

  // A: every send slot taken, then none is free until a completion frees one.
  ASSERT_EQ(a.ring->free_send_slots(), test::kPairSendSlots);
  send_control(a, [&](std::span<std::byte> s) { return encode_open(s, 1, open); });
  send_control(a, [](std::span<std::byte> s) { return encode_want(s, 1, 3); });
  send_control(a, [](std::span<std::byte> s) { return encode_close(s, 1); });
  send_control(a, [](std::span<std::byte> s) { return encode_close(s, 2); });
  EXPECT_FALSE(a.ring->try_take_send_slot()) << "four slots out: no free send slot, as a value";
  // B answers: GRANT of two chunks of its region, and its OPEN with its QoS.
  OpenFields answer = open;
  answer.reliability = WireReliability::kReliable;
  answer.overflow = WireOverflow::kBlockPublisher;
  answer.block_timeout_ns = 5'000'000;
  send_control(b, [&](std::span<std::byte> s) { return encode_grant(s, 1, grants, b.region()); });
  send_control(b, [&](std::span<std::byte> s) { return encode_open(s, 1, answer); });

  const auto at_b = receive_control(b, 4, a.region());
  ASSERT_EQ(at_b.size(), 4U);
  EXPECT_EQ(at_b[0].kind, ControlKind::kOpen);
  EXPECT_EQ(at_b[0].open, open);
  EXPECT_EQ(at_b[1].kind, ControlKind::kWant);
  EXPECT_EQ(at_b[1].messages_waiting, 3U);
  EXPECT_EQ(at_b[2].kind, ControlKind::kClose);
  EXPECT_EQ(at_b[2].stream_id, 1U);
  EXPECT_EQ(at_b[3].stream_id, 2U);
  const auto at_a = receive_control(a, 2, b.region());
  ASSERT_EQ(at_a.size(), 2U);
  ASSERT_EQ(at_a[0].kind, ControlKind::kGrant);
  ASSERT_EQ(at_a[0].grant.count, 2U);
  EXPECT_EQ(at_a[0].grant.entry(0), grants[0]);
  EXPECT_EQ(at_a[0].grant.entry(1), grants[1]);
  EXPECT_EQ(at_a[1].open, answer);

  complete_sends(a, 4);
  complete_sends(b, 2);
  EXPECT_EQ(a.ring->free_send_slots(), test::kPairSendSlots) << "every slot back after its completion";
  EXPECT_EQ(a.budget.outstanding(), 0U);
  EXPECT_EQ(b.budget.outstanding(), 0U);
  // A received control message is exactly its byte_len: the slot's tail is not part of it.
  EXPECT_FALSE(a.ring->received(test::kPairReceiveSlots, 16)) << "not a receive slot";
  EXPECT_FALSE(a.ring->received(0, kControlSlotBytes + 1));
}

TEST_F(RdmaDataPlaneOnDevice, ASixteenMiBMessageArrivesIntactAsATwoWriteChainWithOneReceive) {
  ASSERT_NO_FATAL_FAILURE(connect(16 * kMiB + 4096));
  test::CmEnd& a = pair_.a;
  test::CmEnd& b = pair_.b;
  auto max_message = port_max_message_bytes(a.qp());
  ASSERT_TRUE(max_message.ok()) << max_message.error().message();
  std::printf("port max_msg_sz %u bytes\n", max_message.value());
  ASSERT_EQ(max_message.value(), 8 * kMiB) << "rxe's largest message (RdmaVerbsOnDevice measures it)";

  const std::uint32_t length = 16 * kMiB;
  for (std::uint32_t i = 0; i < length / 8; ++i) {  // a word a step: the guest emulates the CPU
    const std::uint64_t word = (i + 1) * 0x9E3779B97F4A7C15ULL;
    std::memcpy(a.mem->base() + std::size_t{i} * 8, &word, 8);
  }
  const auto posting = Clock::now();
  const auto immediate = encode_immediate({.size_class = 5, .slot = 3, .length = length}, 16 * kMiB);
  ASSERT_TRUE(immediate);
  const std::size_t target = 4096;  // a chunk's payload inside B's region
  auto posted = post_write_with_imm(a.qp(), a.budget,
                                    {.local_address = reinterpret_cast<std::uintptr_t>(a.mem->base()),
                                     .lkey = a.mem->mr()->lkey,
                                     .length = length,
                                     .remote_address = a.connection->peer()->base + target,
                                     .rkey = a.connection->peer()->rkey,
                                     .immediate = *immediate,
                                     .signalled = true,
                                     .tag = 77},
                                    max_message.value());
  ASSERT_TRUE(posted.ok()) << posted.error().message();
  ASSERT_EQ(posted->outcome, WriteOutcome::kPosted);
  EXPECT_EQ(posted->parts, 2U);
  EXPECT_TRUE(posted->signalled);
  EXPECT_EQ(a.budget.outstanding(), 2U);

  const auto received = poll_for(*b.recv_cq, 1, kWait);
  const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - posting).count();
  ASSERT_EQ(received.size(), 1U);
  EXPECT_EQ(received[0].kind, CompletionKind::kWriteReceived) << received[0].status_words;
  EXPECT_EQ(received[0].immediate, *immediate);
  std::printf("receive completion %lld ms after the post: byte_len %u for a %u-byte chain of %u writes\n",
              static_cast<long long>(took), received[0].byte_len, length, posted->parts);
  EXPECT_EQ(received[0].byte_len, write_chain_tail_bytes(length, max_message.value()))
      << "byte_len is the last write's length";
  // B learnt A's max_msg_sz from the connect request, and its grant table
  // accepts the chain's completion (slot 3 of the 16 MiB class: the fourth grant).
  ASSERT_EQ(b.connection->peer()->max_message_bytes, max_message.value());
  constexpr std::array<GrantClass, 6> kPool = {
      {{256, 1}, {4096, 1}, {65536, 1}, {kMiB, 1}, {4 * kMiB, 1}, {16 * kMiB, 4}}};
  auto table = GrantTable::create(kPool, b.connection->peer()->max_message_bytes);
  ASSERT_TRUE(table.ok()) << table.error().message();
  for (std::uint32_t chunk = 0; chunk < 4; ++chunk) {
    ASSERT_EQ(table->grant(5, chunk, 1).slot, chunk);
  }
  const ResolvedWrite resolved = table->resolve(received[0].immediate, received[0].byte_len);
  ASSERT_TRUE(resolved.accepted()) << to_string(resolved.refusal);
  EXPECT_EQ(resolved.length, length);
  EXPECT_EQ(resolved.chunk_index, 3U);
  const auto sent = poll_for(*a.send_cq, 1, kWait);
  ASSERT_EQ(sent.size(), 1U);
  EXPECT_EQ(sent[0].kind, CompletionKind::kSendCompleted);
  EXPECT_EQ(sent[0].work.kind, WorkKind::kWrite);
  EXPECT_EQ(sent[0].work.tag, 77U);
  EXPECT_EQ(sent[0].work.sequence, posted->sequence);
  a.budget.retire(sent[0].work.sequence);
  EXPECT_EQ(a.budget.outstanding(), 0U) << "the one completion retired the unsignalled first part too";
  EXPECT_EQ(std::memcmp(b.mem->base() + target, a.mem->base(), length), 0) << "the chunk is not what was sent";
  // One receive consumed, one send completion: nothing else comes.
  EXPECT_TRUE(poll_for(*b.recv_cq, 1, milliseconds(200)).empty()) << "the first part consumed a receive";
  EXPECT_TRUE(poll_for(*a.send_cq, 1, milliseconds(50)).empty()) << "the unsignalled part completed";
}

TEST_F(RdmaDataPlaneOnDevice, AQueuePairMovedToErrorFlushesEveryPostedReceiveAsValues) {
  ASSERT_NO_FATAL_FAILURE(connect(kSmallRegionBytes));
  test::CmEnd& b = pair_.b;
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(b.qp(), &attr, IBV_QP_STATE), 0);

  const auto flushed = poll_for(*b.recv_cq, test::kPairReceiveSlots, kWait);
  ASSERT_EQ(flushed.size(), test::kPairReceiveSlots);
  std::set<std::uint32_t> slots;
  for (const Completion& c : flushed) {
    EXPECT_EQ(c.kind, CompletionKind::kFailed);
    EXPECT_EQ(c.status, IBV_WC_WR_FLUSH_ERR) << c.status_words;
    EXPECT_EQ(c.work.kind, WorkKind::kReceive);
    slots.insert(c.slot());
  }
  EXPECT_EQ(slots.size(), test::kPairReceiveSlots) << "each posted receive flushed once";
  std::printf("flushed: %zu receives, \"%s\"\n", flushed.size(), flushed[0].status_words);
  EXPECT_EQ(std::string_view(flushed[0].status_words), "Work Request Flushed Error");
}

TEST_F(RdmaDataPlaneOnDevice, TheCompletionChannelFdBecomesReadableWhenAWriteArrivesAndAgainAfterTheReArm) {
  ASSERT_NO_FATAL_FAILURE(connect(kSmallRegionBytes));
  test::CmEnd& a = pair_.a;
  test::CmEnd& b = pair_.b;
  const int fd = b.channel->fd;
  ASSERT_TRUE(b.recv_cq->arm().ok());
  EXPECT_FALSE(wait_readable(fd, milliseconds(0)).value()) << "armed, nothing came: quiet";
  auto channel_event = take_channel_event(b.channel.get());
  ASSERT_TRUE(channel_event.ok());
  EXPECT_EQ(channel_event.value(), nullptr) << "non-blocking: no event is a value";

  for (std::uint32_t round = 1; round <= 2; ++round) {
    const auto immediate = encode_immediate({.size_class = 1, .slot = round, .length = 4096}, 4096);
    auto posted = post_write_with_imm(a.qp(), a.budget,
                                      {.local_address = reinterpret_cast<std::uintptr_t>(a.mem->base()),
                                       .lkey = a.mem->mr()->lkey,
                                       .length = 4096,
                                       .remote_address = a.connection->peer()->base,
                                       .rkey = a.connection->peer()->rkey,
                                       .immediate = *immediate,
                                       .signalled = true},
                                      8 * kMiB);
    ASSERT_TRUE(posted.ok() && posted->outcome == WriteOutcome::kPosted);
    const auto start = Clock::now();
    auto readable = wait_readable(fd, milliseconds(5000));
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
    ASSERT_TRUE(readable.ok() && readable.value()) << "round " << round << ": no event within 5 s";
    std::printf("round %u: channel readable %lld us after the post\n", round, static_cast<long long>(took));
    channel_event = take_channel_event(b.channel.get());
    ASSERT_TRUE(channel_event.ok());
    ASSERT_EQ(channel_event.value(), b.recv_cq->get());
    ASSERT_TRUE(b.recv_cq->event_taken().ok());  // acknowledged in a batch later, re-armed now
    EXPECT_EQ(b.recv_cq->unacknowledged_events(), round);
    // Poll after the re-arm until empty: the write is found.
    const auto got = poll_for(*b.recv_cq, 1, kWait);
    ASSERT_EQ(got.size(), 1U);
    EXPECT_EQ(got[0].kind, CompletionKind::kWriteReceived);
    EXPECT_EQ(got[0].immediate, *immediate);
    EXPECT_EQ(got[0].byte_len, 4096U);
    ASSERT_TRUE(b.ring->repost_receive(b.qp(), got[0].slot()).ok());
    EXPECT_FALSE(wait_readable(fd, milliseconds(0)).value()) << "drained and re-armed: quiet again";
    complete_sends(a, 1);
  }
}

// Why every receive of the control ring has a slot, also those that
// writes consume: a queue pair consumes its receives in the order they were
// posted, whichever message comes, and a SEND that meets a zero-length
// receive breaks the queue pair.
TEST_F(RdmaDataPlaneOnDevice, ASendThatMeetsAZeroLengthReceiveFailsBothSides) {
  ASSERT_NO_FATAL_FAILURE(connect(kSmallRegionBytes, /*post_b_receives=*/false));
  test::CmEnd& a = pair_.a;
  test::CmEnd& b = pair_.b;
  ibv_recv_wr zero_length{};
  zero_length.wr_id = encode_work_request_id({.kind = WorkKind::kReceive, .tag = 0});
  ibv_recv_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_recv(b.qp(), &zero_length, &bad), 0);

  send_control(a, [](std::span<std::byte> s) { return encode_close(s, 1); });
  const auto at_b = poll_for(*b.recv_cq, 1, kWait);
  ASSERT_EQ(at_b.size(), 1U);
  std::printf("receiver: %s; ", at_b[0].status_words);
  EXPECT_EQ(at_b[0].kind, CompletionKind::kFailed);
  // mlx5 says LOC_LEN_ERR; rxe says LOC_QP_OP_ERR (measured in the guest). Either way the queue pair is in error.
  EXPECT_TRUE(at_b[0].status == IBV_WC_LOC_LEN_ERR || at_b[0].status == IBV_WC_LOC_QP_OP_ERR) << at_b[0].status_words;
  const auto at_a = poll_for(*a.send_cq, 1, kWait);
  ASSERT_EQ(at_a.size(), 1U);
  std::printf("sender: %s\n", at_a[0].status_words);
  EXPECT_EQ(at_a[0].kind, CompletionKind::kFailed) << "the sender's SEND did not fail";
  EXPECT_NE(at_a[0].status, IBV_WC_WR_FLUSH_ERR) << "the SEND itself failed, it was not only flushed";
  EXPECT_EQ(at_a[0].work.kind, WorkKind::kControlSend);
}

}  // namespace
}  // namespace axon::rdma
