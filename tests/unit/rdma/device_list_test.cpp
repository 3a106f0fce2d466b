// The devices of the machine the test runs on: on a build host without RDMA
// the choice gives the clear "no RDMA device" error; in the Soft-RoCE guest
// (ctest rdma.softroce_devices, AXON_RDMA_EXPECT_DEVICE=rxe0) the device is
// found, its port active and its RoCE v2 GID the one of the guest's address.
#include "transports/rdma/device_list.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "transports/rdma/device_choice.hpp"

namespace axon::rdma {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): single-threaded test
  return value == nullptr ? std::string() : std::string(value);
}

TEST(RdmaDevicesHere, WithoutADeviceTheChoiceSaysThereIsNone) {
  auto devices = list_devices();
  ASSERT_TRUE(devices.ok()) << devices.error().message();
  if (!devices->empty()) {
    GTEST_SKIP() << "this machine has RDMA devices (" << devices->front().name << ")";
  }
  const auto choice =
      choose_device(*devices, {.host = "here", .device = "rxe0", .port = 1, .gid_index = {}, .ipv4 = 0});
  ASSERT_TRUE(choice.failed());
  EXPECT_NE(choice.error().message().find("host 'here': no RDMA device found"), std::string::npos)
      << choice.error().message();
}

TEST(RdmaDevicesHere, TheExpectedDeviceIsFoundWithAnActivePortAndItsAddressesGid) {
  const std::string expected = env("AXON_RDMA_EXPECT_DEVICE");
  if (expected.empty()) {
    GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
  }
  in_addr address{};
  ASSERT_EQ(inet_pton(AF_INET, env("AXON_RDMA_EXPECT_IPV4").c_str(), &address), 1)
      << "AXON_RDMA_EXPECT_IPV4 must be the device's IPv4 address";
  auto devices = list_devices();
  ASSERT_TRUE(devices.ok()) << devices.error().message();
  const auto choice = choose_device(
      *devices, {.host = "guest", .device = expected, .port = 1, .gid_index = {}, .ipv4 = ntohl(address.s_addr)});
  ASSERT_TRUE(choice.ok()) << choice.error().message();
  EXPECT_EQ(choice->device, expected);
  EXPECT_EQ(choice->gid.type, GidType::kRoceV2);
  ASSERT_TRUE(gid_is_ipv4(choice->gid.gid)) << gid_text(choice->gid.gid);
  EXPECT_EQ(gid_ipv4(choice->gid.gid), ntohl(address.s_addr)) << gid_text(choice->gid.gid);

  const auto missing =
      choose_device(*devices, {.host = "guest", .device = "mlx5_0", .port = 1, .gid_index = {}, .ipv4 = 0});
  ASSERT_TRUE(missing.failed());
  EXPECT_NE(missing.error().message().find("present: " + expected), std::string::npos) << missing.error().message();
}

}  // namespace
}  // namespace axon::rdma
