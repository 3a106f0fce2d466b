// What the design (docs/design/rdma-transport.md) assumes of the verbs, on
// the Soft-RoCE guest's device: a MAP_SHARED memfd registered once takes a
// WRITE WITH IMMEDIATE that another mapping of the memfd sees at once, the
// receive completion carries the immediate and the written length, and the
// port's largest message. Two RC queue pairs of one process connected to
// each other by hand (no rdma_cm). Skipped unless AXON_RDMA_EXPECT_DEVICE
// names the device (ctest rdma.softroce_devices).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "src/base/errors.hpp"
#include "transports/rdma/device_choice.hpp"
#include "transports/rdma/device_list.hpp"
#include "transports/rdma/immediate.hpp"
#include "transports/rdma/pin_limit.hpp"
#include "transports/rdma/verbs_handles.hpp"

namespace axon::rdma {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kRegionBytes = 40 * kMiB;  // source at 0, target at 20 MiB
constexpr std::size_t kTargetOffset = 20 * kMiB;

// RESET -> INIT -> RTR -> RTS towards `remote_qpn` on the same port and GID.
void connect(ibv_qp* qp, std::uint32_t remote_qpn, const DeviceChoice& d) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = static_cast<std::uint8_t>(d.port);
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  ASSERT_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
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
  ASSERT_EQ(ibv_modify_qp(qp, &a,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                              IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
            0);
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 1;
  ASSERT_EQ(ibv_modify_qp(qp, &a,
                          IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                              IBV_QP_MAX_QP_RD_ATOMIC),
            0);
}

// Polls until `want` completions came, or 10 s passed.
std::vector<ibv_wc> poll(ibv_cq* cq, std::size_t want) {
  std::vector<ibv_wc> done;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (done.size() < want && std::chrono::steady_clock::now() < until) {
    ibv_wc wc{};
    if (ibv_poll_cq(cq, 1, &wc) == 1) {
      done.push_back(wc);
    }
  }
  return done;
}

TEST(RdmaVerbsOnDevice, AWriteWithImmediateLandsInASharedMemfdAndSaysWhichAndHowLong) {
  const char* expected = std::getenv("AXON_RDMA_EXPECT_DEVICE");  // NOLINT(concurrency-mt-unsafe): single-threaded
  if (expected == nullptr) {
    GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
  }
  auto devices = list_devices();
  ASSERT_TRUE(devices.ok()) << devices.error().message();
  const auto choice = choose_device(
      *devices,
      {.host = "guest", .device = expected, .port = 1, .gid_index = {}, .ipv4 = (10U << 24) | (2U << 8) | 15U});
  ASSERT_TRUE(choice.ok()) << choice.error().message();

  const int fd = memfd_create("axon-rdma-probe", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(kRegionBytes)), 0);
  auto* registered = static_cast<std::byte*>(mmap(nullptr, kRegionBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  auto* other_view = static_cast<const std::byte*>(mmap(nullptr, kRegionBytes, PROT_READ, MAP_SHARED, fd, 0));
  ASSERT_NE(registered, MAP_FAILED);
  ASSERT_NE(other_view, MAP_FAILED);

  auto device = open_device(choice->device);
  ASSERT_TRUE(device.ok()) << device.error().message();
  ibv_port_attr port{};
  ASSERT_EQ(ibv_query_port(device.value().get(), static_cast<std::uint8_t>(choice->port), &port), 0);
  std::printf("port %u: max_msg_sz %u bytes\n", choice->port, port.max_msg_sz);
  const PdHandle pd(ibv_alloc_pd(device.value().get()));
  const CqHandle cq(ibv_create_cq(device.value().get(), 16, nullptr, nullptr, 0));
  ASSERT_NE(pd, nullptr);
  ASSERT_NE(cq, nullptr);
  auto mr = register_region(pd.get(), registered, kRegionBytes, "the probe region");
  ASSERT_TRUE(mr.ok()) << mr.error().message();
  std::array<QpHandle, 2> qps;
  for (QpHandle& qp : qps) {
    ibv_qp_init_attr init{};
    init.send_cq = cq.get();
    init.recv_cq = cq.get();
    init.qp_type = IBV_QPT_RC;
    init.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = 0};
    qp.reset(ibv_create_qp(pd.get(), &init));
    ASSERT_NE(qp, nullptr) << errno_text(errno);
  }
  connect(qps[0].get(), qps[1]->qp_num, *choice);
  connect(qps[1].get(), qps[0]->qp_num, *choice);

  // The largest message the port takes in one write (16 MiB if it can).
  const std::size_t length = std::min<std::size_t>(16 * kMiB, port.max_msg_sz);
  for (std::size_t i = 0; i < length; ++i) {
    registered[i] = static_cast<std::byte>(i * 7 + 1);
  }
  const auto capacity = static_cast<std::uint32_t>(16 * kMiB);
  const auto imm =
      encode_immediate({.size_class = 5, .slot = 3, .length = static_cast<std::uint32_t>(length)}, capacity);
  ASSERT_TRUE(imm);

  ibv_recv_wr recv{};
  recv.wr_id = 2;
  ibv_recv_wr* bad_recv = nullptr;
  ASSERT_EQ(ibv_post_recv(qps[1].get(), &recv, &bad_recv), 0);
  ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(registered),
              .length = static_cast<std::uint32_t>(length),
              .lkey = mr.value()->lkey};
  ibv_send_wr send{};
  send.wr_id = 1;
  send.sg_list = &sge;
  send.num_sge = 1;
  send.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  send.send_flags = IBV_SEND_SIGNALED;
  send.imm_data = htonl(*imm);
  send.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(registered + kTargetOffset);
  send.wr.rdma.rkey = mr.value()->rkey;
  ibv_send_wr* bad_send = nullptr;
  ASSERT_EQ(ibv_post_send(qps[0].get(), &send, &bad_send), 0);

  const std::vector<ibv_wc> done = poll(cq.get(), 2);
  ASSERT_EQ(done.size(), 2U);
  for (const ibv_wc& wc : done) {
    ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
    if (wc.wr_id != 2) {
      continue;
    }
    EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
    ASSERT_TRUE((wc.wc_flags & IBV_WC_WITH_IMM) != 0);
    const auto fields = decode_immediate(ntohl(wc.imm_data),
                                         std::array<std::uint32_t, 6>{256, 4096, 65536, 1 << 20, 4 << 20, capacity});
    ASSERT_TRUE(fields);
    EXPECT_EQ(fields->slot, 3U);
    EXPECT_EQ(fields->length, length);
    std::printf("receive completion: byte_len %u for a %zu-byte write\n", wc.byte_len, length);
    EXPECT_EQ(wc.byte_len, length) << "the provider does not report the written length";
  }
  EXPECT_EQ(std::memcmp(other_view + kTargetOffset, registered, length), 0)
      << "the other mapping of the memfd does not see what the write put there";
  munmap(registered, kRegionBytes);
  munmap(const_cast<std::byte*>(other_view), kRegionBytes);
  close(fd);
}

// The pin check says what ibv_reg_mr will do: as root (CAP_IPC_LOCK) both
// let 1 MiB through; as an unprivileged user under `ulimit -l 64` (the
// Soft-RoCE stage runs the binary that way too) both refuse it.
TEST(RdmaVerbsOnDevice, ThePinCheckPredictsWhetherRegistrationSucceeds) {
  const char* expected = std::getenv("AXON_RDMA_EXPECT_DEVICE");  // NOLINT(concurrency-mt-unsafe): single-threaded
  if (expected == nullptr) {
    GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
  }
  const int fd = memfd_create("axon-rdma-pin", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(kMiB)), 0);
  auto* base = static_cast<std::byte*>(mmap(nullptr, kMiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(base, MAP_FAILED);
  std::memset(base, 1, kMiB);

  auto device = open_device(expected);
  ASSERT_TRUE(device.ok()) << device.error().message();
  const PdHandle pd(ibv_alloc_pd(device.value().get()));
  ASSERT_NE(pd, nullptr);
  const bool predicted = check_can_pin(kMiB, "a 1 MiB region").ok();
  const MrHandle raw(ibv_reg_mr(pd.get(), base, kMiB, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  const int err = errno;
  std::printf("uid %u: the pin check %s, ibv_reg_mr %s\n", getuid(), predicted ? "allows" : "refuses",
              raw != nullptr ? "succeeded" : errno_text(err).c_str());
  EXPECT_EQ(raw != nullptr, predicted);
  if (raw == nullptr) {
    EXPECT_EQ(err, ENOMEM);
  }
  // register_region() says which limit instead of ENOMEM.
  const auto checked = register_region(pd.get(), base, kMiB, "a 1 MiB region");
  EXPECT_EQ(checked.ok(), predicted);
  if (!checked.ok()) {
    EXPECT_NE(checked.error().message().find("RLIMIT_MEMLOCK"), std::string::npos) << checked.error().message();
  }
  munmap(base, kMiB);
  close(fd);
}

}  // namespace
}  // namespace axon::rdma
