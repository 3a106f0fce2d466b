// Two RC queue pairs of one process connected to each other by hand (no
// rdma_cm), on one device port and GID: the on-device tests' way to make a
// write land in a registered region without a second process. Both complete
// on the caller's CQ.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "src/base/errors.hpp"
#include "transports/rdma/device_choice.hpp"
#include "transports/rdma/verbs_handles.hpp"

namespace axon::rdma::test {

/// Polls `cq` until `want` completions came, or `limit` passed.
inline std::vector<ibv_wc> poll_completions(ibv_cq* cq, std::size_t want,
                                            std::chrono::seconds limit = std::chrono::seconds(10)) {
  std::vector<ibv_wc> done;
  const auto until = std::chrono::steady_clock::now() + limit;
  while (done.size() < want && std::chrono::steady_clock::now() < until) {
    ibv_wc wc{};
    if (ibv_poll_cq(cq, 1, &wc) == 1) {
      done.push_back(wc);
    }
  }
  return done;
}

class LoopbackQpPair {
 public:
  /// Creates both queue pairs on `pd` (send and receive completions on `cq`)
  /// and moves each through INIT, RTR, RTS towards the other.
  [[nodiscard]] ::testing::AssertionResult open(ibv_pd* pd, ibv_cq* cq, const DeviceChoice& device) {
    for (QpHandle& qp : qps_) {
      ibv_qp_init_attr init{};
      init.send_cq = cq;
      init.recv_cq = cq;
      init.qp_type = IBV_QPT_RC;
      init.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = 0};
      qp.reset(ibv_create_qp(pd, &init));
      if (qp == nullptr) {
        return ::testing::AssertionFailure() << "ibv_create_qp: " << errno_text(errno);
      }
    }
    if (auto a = connect(qps_[0].get(), qps_[1]->qp_num, device); !a) {
      return a;
    }
    return connect(qps_[1].get(), qps_[0]->qp_num, device);
  }

  [[nodiscard]] ibv_qp* sender() const noexcept { return qps_[0].get(); }
  [[nodiscard]] ibv_qp* receiver() const noexcept { return qps_[1].get(); }

  /// Posts one zero-length receive (wr_id `recv_id`) on the receiver, then a
  /// signalled WRITE WITH IMMEDIATE (wr_id `send_id`) of `source` to
  /// `remote_addr` under `rkey` from the sender; `immediate` in host order.
  [[nodiscard]] ::testing::AssertionResult write_with_immediate(ibv_sge source, std::uint64_t remote_addr,
                                                                std::uint32_t rkey, std::uint32_t immediate,
                                                                std::uint64_t send_id, std::uint64_t recv_id) const {
    ibv_recv_wr recv{};
    recv.wr_id = recv_id;
    ibv_recv_wr* bad_recv = nullptr;
    if (const int rc = ibv_post_recv(receiver(), &recv, &bad_recv); rc != 0) {
      return ::testing::AssertionFailure() << "ibv_post_recv: " << errno_text(rc);
    }
    ibv_send_wr send{};
    send.wr_id = send_id;
    send.sg_list = &source;
    send.num_sge = 1;
    send.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    send.send_flags = IBV_SEND_SIGNALED;
    send.imm_data = htonl(immediate);
    send.wr.rdma.remote_addr = remote_addr;
    send.wr.rdma.rkey = rkey;
    ibv_send_wr* bad_send = nullptr;
    if (const int rc = ibv_post_send(sender(), &send, &bad_send); rc != 0) {
      return ::testing::AssertionFailure() << "ibv_post_send: " << errno_text(rc);
    }
    return ::testing::AssertionSuccess();
  }

 private:
  // RESET -> INIT -> RTR -> RTS towards `remote_qpn` on the same port and GID.
  static ::testing::AssertionResult connect(ibv_qp* qp, std::uint32_t remote_qpn, const DeviceChoice& d) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = static_cast<std::uint8_t>(d.port);
    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
    if (const int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
        rc != 0) {
      return ::testing::AssertionFailure() << "ibv_modify_qp INIT: " << errno_text(rc);
    }
    a = {};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = remote_qpn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.is_global = 1;
    std::memcpy(a.ah_attr.grh.dgid.raw, d.gid.gid.data(), 16);
    a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(d.gid.index);
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.port_num = static_cast<std::uint8_t>(d.port);
    if (const int rc = ibv_modify_qp(qp, &a,
                                     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                         IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
        rc != 0) {
      return ::testing::AssertionFailure() << "ibv_modify_qp RTR: " << errno_text(rc);
    }
    a = {};
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = 1;
    if (const int rc = ibv_modify_qp(qp, &a,
                                     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                         IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
        rc != 0) {
      return ::testing::AssertionFailure() << "ibv_modify_qp RTS: " << errno_text(rc);
    }
    return ::testing::AssertionSuccess();
  }

  std::array<QpHandle, 2> qps_;
};

}  // namespace axon::rdma::test
