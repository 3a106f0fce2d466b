// What the design (docs/design/rdma-transport.md) assumes of the verbs, on
// the Soft-RoCE guest's device: a MAP_SHARED memfd registered once takes a
// WRITE WITH IMMEDIATE that another mapping of the memfd sees at once, the
// receive completion carries the immediate and the written length, and the
// port's largest message. Two RC queue pairs of one process connected to
// each other by hand (no rdma_cm, loopback_qp.hpp). Skipped unless AXON_RDMA_EXPECT_DEVICE
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
#include "tests/unit/rdma/loopback_qp.hpp"
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
  test::LoopbackQpPair qps;
  ASSERT_TRUE(qps.open(pd.get(), cq.get(), *choice));

  // The largest message the port takes in one write (16 MiB if it can).
  const std::size_t length = std::min<std::size_t>(16 * kMiB, port.max_msg_sz);
  for (std::size_t i = 0; i < length; ++i) {
    registered[i] = static_cast<std::byte>(i * 7 + 1);
  }
  const auto capacity = static_cast<std::uint32_t>(16 * kMiB);
  const auto imm =
      encode_immediate({.size_class = 5, .slot = 3, .length = static_cast<std::uint32_t>(length)}, capacity);
  ASSERT_TRUE(imm);

  ASSERT_TRUE(qps.write_with_immediate({.addr = reinterpret_cast<std::uintptr_t>(registered),
                                        .length = static_cast<std::uint32_t>(length),
                                        .lkey = mr.value()->lkey},
                                       reinterpret_cast<std::uintptr_t>(registered + kTargetOffset), mr.value()->rkey,
                                       *imm, 1, 2));

  const std::vector<ibv_wc> done = test::poll_completions(cq.get(), 2);
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
