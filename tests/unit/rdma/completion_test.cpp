// Work completions as values (transports/rdma/completion.hpp), fed made-up
// ibv_wc records: no device needed.
#include "transports/rdma/completion.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <string_view>

namespace axon::rdma {
namespace {

ibv_wc wc_of(WorkRequestId id, ibv_wc_opcode opcode, ibv_wc_status status = IBV_WC_SUCCESS) {
  ibv_wc wc{};
  wc.wr_id = encode_work_request_id(id);
  wc.opcode = opcode;
  wc.status = status;
  return wc;
}

TEST(RdmaCompletion, AReceivedSendIsAControlMessageInItsSlot) {
  ibv_wc wc = wc_of({.kind = WorkKind::kReceive, .tag = 7}, IBV_WC_RECV);
  wc.byte_len = 56;
  const Completion sut = classify_completion(wc);
  EXPECT_EQ(sut.kind, CompletionKind::kControlReceived);
  EXPECT_EQ(sut.slot(), 7U);
  EXPECT_EQ(sut.byte_len, 56U);
}

TEST(RdmaCompletion, AReceivedWriteWithImmediateCarriesTheImmediateInHostOrder) {
  ibv_wc wc = wc_of({.kind = WorkKind::kReceive, .tag = 2}, IBV_WC_RECV_RDMA_WITH_IMM);
  wc.wc_flags = IBV_WC_WITH_IMM;
  wc.imm_data = htonl(0x5A000123U);
  wc.byte_len = 8U << 20;
  const Completion sut = classify_completion(wc);
  EXPECT_EQ(sut.kind, CompletionKind::kWriteReceived);
  EXPECT_EQ(sut.immediate, 0x5A000123U);
  EXPECT_EQ(sut.byte_len, 8U << 20);
  EXPECT_EQ(sut.slot(), 2U) << "the slot the write consumed, to post again";
}

TEST(RdmaCompletion, SendCompletionsSayWhichSlotOrTagAndSequence) {
  const Completion control =
      classify_completion(wc_of({.kind = WorkKind::kControlSend, .tag = 3, .sequence = 9}, IBV_WC_SEND));
  EXPECT_EQ(control.kind, CompletionKind::kSendCompleted);
  EXPECT_EQ(control.work.kind, WorkKind::kControlSend);
  EXPECT_EQ(control.slot(), 3U);
  EXPECT_EQ(control.work.sequence, 9U);
  const Completion write =
      classify_completion(wc_of({.kind = WorkKind::kWrite, .tag = 44, .sequence = 12}, IBV_WC_RDMA_WRITE));
  EXPECT_EQ(write.kind, CompletionKind::kSendCompleted);
  EXPECT_EQ(write.work.kind, WorkKind::kWrite);
  EXPECT_EQ(write.work.tag, 44U);
}

TEST(RdmaCompletion, AnErrorStatusIsAFailureWithItsWordsAndWhatFailed) {
  // On an error only wr_id and status are valid: the opcode is garbage.
  const Completion sut = classify_completion(
      wc_of({.kind = WorkKind::kReceive, .tag = 5}, static_cast<ibv_wc_opcode>(0x7F), IBV_WC_WR_FLUSH_ERR));
  EXPECT_EQ(sut.kind, CompletionKind::kFailed);
  EXPECT_EQ(sut.status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(std::string_view(sut.status_words), ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR));
  EXPECT_NE(std::string_view(sut.status_words).find("Flush"), std::string_view::npos) << sut.status_words;
  EXPECT_EQ(sut.work.kind, WorkKind::kReceive);
  EXPECT_EQ(sut.slot(), 5U);
}

TEST(RdmaCompletion, EveryCompletionNamesItsQueuePairFailedOrNot) {
  // One CQ serves every link: the participant routes by qp_num, which an error completion carries too.
  ibv_wc ok = wc_of({.kind = WorkKind::kControlSend, .tag = 1, .sequence = 2}, IBV_WC_SEND);
  ok.qp_num = 0x11;
  ibv_wc failed = wc_of({.kind = WorkKind::kWrite, .tag = 1}, IBV_WC_RDMA_WRITE, IBV_WC_RETRY_EXC_ERR);
  failed.qp_num = 0x22;
  EXPECT_EQ(classify_completion(ok).qp_num, 0x11U);
  EXPECT_EQ(classify_completion(failed).qp_num, 0x22U);
}

TEST(RdmaCompletion, WhatThisProtocolNeverSendsIsUnexpected) {
  ibv_wc send_with_imm = wc_of({.kind = WorkKind::kReceive, .tag = 1}, IBV_WC_RECV);
  send_with_imm.wc_flags = IBV_WC_WITH_IMM;
  EXPECT_EQ(classify_completion(send_with_imm).kind, CompletionKind::kUnexpected);
  ibv_wc foreign{};
  foreign.wr_id = 42;  // no kind of ours
  foreign.opcode = IBV_WC_RECV;
  EXPECT_EQ(classify_completion(foreign).kind, CompletionKind::kUnexpected);
  EXPECT_EQ(classify_completion(wc_of({.kind = WorkKind::kControlSend}, IBV_WC_RDMA_WRITE)).kind,
            CompletionKind::kUnexpected);
}

}  // namespace
}  // namespace axon::rdma
