// axon doctor's network checks against fake hosts: each verdict and its fix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/tools/axon/doctor/check.hpp"
#include "tests/unit/tools/fake_host.hpp"

namespace axon::tools::doctor {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

void buffer_limits(const FakeHost& host, const char* rmem, const char* wmem) {
  host.file("/proc/sys/net/core/rmem_max", std::string(rmem) + "\n");
  host.file("/proc/sys/net/core/wmem_max", std::string(wmem) + "\n");
}

TEST(SocketBuffersCheck, PassesWhenTheLimitsHoldWhatTheUdpTransportAsks) {
  FakeHost host;
  buffer_limits(host, "4194304", "8388608");

  const CheckResult sut = check_socket_buffers(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_THAT(sut.found, HasSubstr("net.core.rmem_max 4 MiB, wmem_max 8 MiB; the UDP transport asks for 4 MiB"));
}

TEST(SocketBuffersCheck, WarnsOnTheKernelDefaultsWithTheSysctlThatRaisesThem) {
  FakeHost host;
  buffer_limits(host, "212992", "212992");

  const CheckResult sut = check_socket_buffers(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.found, HasSubstr("net.core.rmem_max 208 KiB"));
  EXPECT_THAT(sut.fix, HasSubstr("sudo sysctl -w net.core.rmem_max=4194304 net.core.wmem_max=4194304"));
  EXPECT_THAT(sut.fix, HasSubstr("/etc/sysctl.d/90-axon.conf"));
}

TEST(SocketBuffersCheck, PassesBelowTheLimitsWithCapNetAdmin) {
  FakeHost host;
  buffer_limits(host, "212992", "212992");
  host.facts.cap_net_admin = true;

  const CheckResult sut = check_socket_buffers(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_THAT(sut.found, HasSubstr("CAP_NET_ADMIN"));
}

TEST(SocketBuffersCheck, SkipsWithoutTheSysctls) {
  FakeHost host;

  EXPECT_EQ(check_socket_buffers(host.view()).status, Status::kSkip);
}

void rdma_port(const FakeHost& host, const char* state) {
  host.file("/sys/class/infiniband/mlx5_0/ports/1/state", std::string(state) + "\n");
  host.file("/sys/class/infiniband/mlx5_0/ports/1/link_layer", "Ethernet\n");
}

TEST(RdmaDevicesCheck, PassesWithAnActivePort) {
  FakeHost host;
  rdma_port(host, "4: ACTIVE");

  const CheckResult sut = check_rdma_devices(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_EQ(sut.found, "mlx5_0 port 1 ACTIVE (Ethernet)");
}

TEST(RdmaDevicesCheck, WarnsWhenNoPortIsActive) {
  FakeHost host;
  rdma_port(host, "1: DOWN");

  const CheckResult sut = check_rdma_devices(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.found, HasSubstr("mlx5_0 port 1 DOWN (Ethernet): no port is ACTIVE"));
  EXPECT_THAT(sut.fix, HasSubstr("ibv_devinfo"));
}

TEST(RdmaDevicesCheck, SkipsWithoutADevice) {
  FakeHost host;

  EXPECT_EQ(check_rdma_devices(host.view()).status, Status::kSkip);
}

TEST(RdmaMemlockCheck, FailsWhenTheLimitCannotPinTheDefaultPool) {
  FakeHost host;
  rdma_port(host, "4: ACTIVE");
  host.facts.memlock = {.soft = 8 * kMiB, .hard = 8 * kMiB};

  const CheckResult sut = check_rdma_memlock(host.view());

  EXPECT_EQ(sut.status, Status::kFail);
  EXPECT_THAT(sut.found, HasSubstr("does not start"));
  EXPECT_THAT(sut.fix, HasSubstr("ulimit -l unlimited"));
}

TEST(RdmaMemlockCheck, PassesWithCapIpcLock) {
  FakeHost host;
  rdma_port(host, "4: ACTIVE");
  host.facts.cap_ipc_lock = true;

  const CheckResult sut = check_rdma_memlock(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_THAT(sut.fix, IsEmpty());
}

TEST(RdmaMemlockCheck, SkipsWithoutADevice) {
  FakeHost host;
  host.facts.memlock = {.soft = 0, .hard = 0};

  EXPECT_EQ(check_rdma_memlock(host.view()).status, Status::kSkip);
}

}  // namespace
}  // namespace axon::tools::doctor
