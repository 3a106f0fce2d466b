// The send side's accounting (no device): work request ids, the send
// queue budget retired by in-order completions, and the free send slots of
// a control ring.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "transports/rdma/send_queue_budget.hpp"
#include "transports/rdma/slot_free_list.hpp"
#include "transports/rdma/work_request_id.hpp"

namespace axon::rdma {
namespace {

TEST(RdmaWorkRequestId, RoundTripsEveryKindAndRefusesOthers) {
  for (const WorkKind kind : {WorkKind::kReceive, WorkKind::kControlSend, WorkKind::kWrite}) {
    const WorkRequestId id{.kind = kind, .tag = 0xBEEF, .sequence = kWorkSequenceMask};
    EXPECT_EQ(decode_work_request_id(encode_work_request_id(id)), id);
  }
  const WorkRequestId wrapped{.kind = WorkKind::kWrite, .tag = 1, .sequence = kWorkSequenceMask + 5};
  EXPECT_EQ(decode_work_request_id(encode_work_request_id(wrapped))->sequence, 4U) << "sequence is mod 2^40";
  EXPECT_FALSE(decode_work_request_id(0));
  EXPECT_FALSE(decode_work_request_id(std::uint64_t{4} << 56U));
  EXPECT_FALSE(decode_work_request_id(~std::uint64_t{0}));
}

TEST(RdmaSendQueueBudget, ACompletionRetiresItselfAndEverythingPostedBefore) {
  SendQueueBudget sut(16);
  EXPECT_EQ(sut.sequence_after(2), 2U);
  sut.take(2, false);  // a chain of two, unsignalled
  const std::uint64_t signalled = sut.sequence_after(1);
  sut.take(1, true);
  sut.take(3, false);
  EXPECT_EQ(sut.outstanding(), 6U);
  sut.retire(signalled);
  EXPECT_EQ(sut.outstanding(), 3U) << "the chain before the signalled one is done too";
  sut.retire(signalled);  // a duplicate (a flush of one already counted) retires nothing
  EXPECT_EQ(sut.outstanding(), 3U);
  sut.retire(signalled + 10);  // ahead of what was posted: not ours
  EXPECT_EQ(sut.outstanding(), 3U);
  sut.retire(6);
  EXPECT_EQ(sut.outstanding(), 0U);
}

TEST(RdmaSendQueueBudget, RefusesWhatDoesNotFitUntilCompletionsComeBack) {
  SendQueueBudget sut(4);
  EXPECT_TRUE(sut.has_room(4));
  EXPECT_FALSE(sut.has_room(5));
  sut.take(3, true);
  EXPECT_TRUE(sut.has_room(1));
  EXPECT_FALSE(sut.has_room(2));
  sut.retire(3);
  EXPECT_TRUE(sut.has_room(4));
}

TEST(RdmaSendQueueBudget, SignalsOnItsOwnBeforeHalfTheQueueIsUnsignalled) {
  SendQueueBudget sut(8);
  EXPECT_FALSE(sut.must_signal(1, false));
  EXPECT_TRUE(sut.must_signal(1, true));
  sut.take(3, false);
  EXPECT_TRUE(sut.must_signal(1, false)) << "3 + 1 unsignalled reach half of 8";
  sut.take(1, true);
  EXPECT_FALSE(sut.must_signal(3, false)) << "a signalled post starts the count again";
}

TEST(RdmaSendQueueBudget, CountsAcrossTheSequenceWrap) {
  SendQueueBudget sut(8, kWorkSequenceMask - 1);  // a long-lived queue pair, 2 short of 2^40
  const std::uint64_t first = sut.sequence_after(1);
  EXPECT_EQ(first, kWorkSequenceMask);
  sut.take(1, true);
  const std::uint64_t last = sut.sequence_after(3);
  EXPECT_EQ(last, 2U) << "the wr_id's 40 bits wrapped";
  sut.take(3, true);
  sut.retire(first);
  EXPECT_EQ(sut.outstanding(), 3U);
  sut.retire(last);
  EXPECT_EQ(sut.outstanding(), 0U);
}

TEST(RdmaSlotFreeList, HandsOutEachSlotOnceAndSaysWhenNoneIsFree) {
  SlotFreeList sut(3);
  std::set<std::uint32_t> taken;
  for (int i = 0; i < 3; ++i) {
    const auto slot = sut.take();
    ASSERT_TRUE(slot);
    EXPECT_TRUE(taken.insert(*slot).second) << "slot " << *slot << " handed out twice";
    EXPECT_TRUE(sut.taken(*slot));
  }
  EXPECT_EQ(sut.free_count(), 0U);
  EXPECT_FALSE(sut.take()) << "no free send slot is a value";
  EXPECT_TRUE(sut.release(1));
  EXPECT_EQ(sut.take(), 1U);
}

TEST(RdmaSlotFreeList, RefusesASlotReleasedTwiceOrNeverTaken) {
  SlotFreeList sut(2);
  EXPECT_FALSE(sut.release(0)) << "never taken";
  EXPECT_FALSE(sut.release(7)) << "not a slot";
  const auto slot = sut.take();
  ASSERT_TRUE(slot);
  EXPECT_TRUE(sut.release(*slot));
  EXPECT_FALSE(sut.release(*slot)) << "released twice";
  EXPECT_EQ(sut.free_count(), 2U);
}

}  // namespace
}  // namespace axon::rdma
