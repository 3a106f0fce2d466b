// The choice of device, port and GID from the config, and the start-up
// errors of issue 16, against described devices (no RDMA device needed).
#include "transports/rdma/device_choice.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace axon::rdma {
namespace {

GidEntry ipv4_gid(std::uint32_t index, std::uint8_t last_byte, GidType type) {
  GidEntry g{.index = index, .gid = {}, .type = type};
  g.gid[10] = 0xff;
  g.gid[11] = 0xff;
  g.gid[12] = 10;
  g.gid[13] = 0;
  g.gid[14] = 2;
  g.gid[15] = last_byte;
  return g;
}

GidEntry link_local_gid(std::uint32_t index, GidType type) {
  GidEntry g{.index = index, .gid = {}, .type = type};
  g.gid[0] = 0xfe;
  g.gid[1] = 0x80;
  g.gid[15] = 1;
  return g;
}

// As the Soft-RoCE guest shows rxe0: port 1 active on eth0, GID 0 link-local,
// GID 1 ::ffff:10.0.2.15, both RoCE v2.
DeviceDescription rxe0(PortState state = PortState::kActive) {
  return {.name = "rxe0",
          .ports = {{.number = 1,
                     .state = state,
                     .ethernet = true,
                     .netdev = "eth0",
                     .gids = {link_local_gid(0, GidType::kRoceV2), ipv4_gid(1, 15, GidType::kRoceV2)}}}};
}

constexpr std::uint32_t kGuestAddress = (10U << 24) | (2U << 8) | 15U;  // 10.0.2.15

DeviceRequest request(std::string device = "rxe0") {
  return {.host = "lidar-soc", .device = std::move(device), .port = 1, .gid_index = {}, .ipv4 = kGuestAddress};
}

std::string message_of(const Result<DeviceChoice>& r) { return std::string(r.error().message()); }

TEST(RdmaDeviceChoice, NoDeviceAtAllSaysSoAndHowToGetOne) {
  const auto r = choose_device({}, request());
  ASSERT_TRUE(r.failed());
  EXPECT_EQ(r.error().code(), ErrorCode::kSystem);
  EXPECT_NE(message_of(r).find("host 'lidar-soc': no RDMA device found"), std::string::npos) << message_of(r);
  EXPECT_NE(message_of(r).find("rdma link add rxe0 type rxe"), std::string::npos) << message_of(r);
}

TEST(RdmaDeviceChoice, ANamedDeviceThatIsMissingListsThosePresent) {
  const std::vector<DeviceDescription> present = {rxe0(), {.name = "mlx5_1", .ports = {}}};
  const auto r = choose_device(present, request("mlx5_0"));
  ASSERT_TRUE(r.failed());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(message_of(r).find("hosts[].rdma_device names 'mlx5_0'"), std::string::npos) << message_of(r);
  EXPECT_NE(message_of(r).find("present: rxe0, mlx5_1"), std::string::npos) << message_of(r);
}

TEST(RdmaDeviceChoice, NoNameTakesTheOnlyDeviceAndRefusesToGuessAmongSeveral) {
  const std::vector<DeviceDescription> one = {rxe0()};
  const auto only = choose_device(one, request(""));
  ASSERT_TRUE(only.ok()) << only.error().message();
  EXPECT_EQ(only->device, "rxe0");

  const std::vector<DeviceDescription> two = {rxe0(), {.name = "rxe1", .ports = {}}};
  const auto several = choose_device(two, request(""));
  ASSERT_TRUE(several.failed());
  EXPECT_NE(message_of(several).find("several RDMA devices (rxe0, rxe1)"), std::string::npos) << message_of(several);
}

TEST(RdmaDeviceChoice, APortThatIsDownNamesItsStateAndInterface) {
  const std::vector<DeviceDescription> present = {rxe0(PortState::kDown)};
  const auto r = choose_device(present, request());
  ASSERT_TRUE(r.failed());
  EXPECT_EQ(r.error().code(), ErrorCode::kSystem);
  EXPECT_NE(message_of(r).find("port 1 of RDMA device rxe0 is DOWN, not ACTIVE: bring eth0 up"), std::string::npos)
      << message_of(r);
}

TEST(RdmaDeviceChoice, APortTheDeviceDoesNotHaveNamesTheKey) {
  const std::vector<DeviceDescription> present = {rxe0()};
  DeviceRequest r = request();
  r.port = 2;
  const auto choice = choose_device(present, r);
  ASSERT_TRUE(choice.failed());
  EXPECT_NE(message_of(choice).find("rdma.port is 2, but device rxe0 has ports 1..1"), std::string::npos)
      << message_of(choice);
}

TEST(RdmaDeviceChoice, AutoPicksTheRoceV2GidOfTheHostsAddress) {
  const std::vector<DeviceDescription> present = {rxe0()};
  const auto r = choose_device(present, request());
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->port, 1U);
  EXPECT_EQ(r->gid.index, 1U);

  DeviceRequest other = request();
  other.ipv4 = kGuestAddress + 1;  // no GID carries it: the first RoCE v2 GID
  const auto fallback = choose_device(present, other);
  ASSERT_TRUE(fallback.ok()) << fallback.error().message();
  EXPECT_EQ(fallback->gid.index, 0U);
}

TEST(RdmaDeviceChoice, NoRoceV2GidListsTheGidsThere) {
  DeviceDescription v1_only = rxe0();
  v1_only.ports[0].gids = {link_local_gid(0, GidType::kRoceV1)};
  const std::vector<DeviceDescription> present = {v1_only};
  const auto r = choose_device(present, request());
  ASSERT_TRUE(r.failed());
  EXPECT_NE(message_of(r).find("has no RoCE v2 GID (GIDs: 0 fe80:0000:0000:0000:0000:0000:0000:0001 (RoCE v1))"),
            std::string::npos)
      << message_of(r);
}

TEST(RdmaDeviceChoice, AConfiguredGidIndexMustBeThereAndRoceV2) {
  DeviceDescription mixed = rxe0();
  mixed.ports[0].gids.push_back(ipv4_gid(2, 15, GidType::kRoceV1));
  const std::vector<DeviceDescription> present = {mixed};
  DeviceRequest r = request();

  r.gid_index = 0;
  const auto chosen = choose_device(present, r);
  ASSERT_TRUE(chosen.ok()) << chosen.error().message();
  EXPECT_EQ(chosen->gid.index, 0U);

  r.gid_index = 2;
  const auto v1 = choose_device(present, r);
  ASSERT_TRUE(v1.failed());
  EXPECT_NE(message_of(v1).find("rdma.gid_index is 2, but GID 2 of rxe0 port 1 is RoCE v1"), std::string::npos)
      << message_of(v1);

  r.gid_index = 7;
  const auto absent = choose_device(present, r);
  ASSERT_TRUE(absent.failed());
  EXPECT_NE(message_of(absent).find("GID 7 of rxe0 port 1 is not there"), std::string::npos) << message_of(absent);
}

}  // namespace
}  // namespace axon::rdma
