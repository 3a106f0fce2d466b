// Allow-lists: networks and single addresses parsed and matched.
#include "transports/udp/allow_list.hpp"

#include <gtest/gtest.h>

namespace axon::udp {
namespace {

TEST(AllowList, MatchesANetworkAndASingleAddress) {
  const AllowList sut({*parse_address_range("10.0.0.0/24"), *parse_address_range("192.168.1.7")});
  EXPECT_TRUE(sut.allows(0x0A000001U));   // 10.0.0.1
  EXPECT_TRUE(sut.allows(0x0A0000FFU));   // 10.0.0.255
  EXPECT_FALSE(sut.allows(0x0A000100U));  // 10.0.1.0
  EXPECT_TRUE(sut.allows(0xC0A80107U));   // 192.168.1.7
  EXPECT_FALSE(sut.allows(0xC0A80108U));  // 192.168.1.8
}

TEST(AllowList, AnEmptyListAllowsEveryone) { EXPECT_TRUE(AllowList().allows(0x01020304U)); }

TEST(AllowList, SlashZeroAllowsEveryone) {
  const AllowList sut({*parse_address_range("0.0.0.0/0")});
  EXPECT_TRUE(sut.allows(0xFFFFFFFFU));
}

TEST(AddressRange, RefusesBadPrefixesAndBitsPastThePrefix) {
  EXPECT_FALSE(parse_address_range("10.0.0.0/33").ok());
  EXPECT_FALSE(parse_address_range("10.0.0.0/").ok());
  EXPECT_FALSE(parse_address_range("host.example").ok());
  const auto past = parse_address_range("10.0.0.5/24");
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.error().message().find("write the network 10.0.0.0/24"), std::string::npos) << past.error().message();
}

}  // namespace
}  // namespace axon::udp
