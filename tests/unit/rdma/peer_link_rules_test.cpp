// Who connects and when the active side tries again (transports/rdma/
// peer_link_rules.hpp): pure rules, on any host.
#include "transports/rdma/peer_link_rules.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

namespace axon::rdma {
namespace {

using std::chrono::milliseconds;

TEST(RdmaPeerLinkRules, TheSmallerSenderIdConnectsAndTheOtherWaits) {
  EXPECT_TRUE(connects_actively(0xA, 0xB));
  EXPECT_FALSE(connects_actively(0xB, 0xA));
  EXPECT_TRUE(connects_actively(0, UINT64_MAX));
  EXPECT_FALSE(connects_actively(UINT64_MAX, 0));
}

TEST(RdmaPeerLinkRules, ExactlyOneOfTwoParticipantsConnects) {
  constexpr std::uint64_t kIds[] = {0, 1, 0x8000000000000000ULL, 0xFFFFFFFFFFFFFFFEULL, UINT64_MAX};
  for (const std::uint64_t a : kIds) {
    for (const std::uint64_t b : kIds) {
      if (a != b) {
        EXPECT_NE(connects_actively(a, b), connects_actively(b, a)) << a << " " << b;
      }
    }
  }
}

TEST(RdmaPeerLinkRules, TheRetryWaitStartsAt100MsAndDoublesUpTo2S) {
  const ReconnectBackoff sut;
  EXPECT_EQ(sut.delay(1), milliseconds(100));
  EXPECT_EQ(sut.delay(2), milliseconds(200));
  EXPECT_EQ(sut.delay(3), milliseconds(400));
  EXPECT_EQ(sut.delay(4), milliseconds(800));
  EXPECT_EQ(sut.delay(5), milliseconds(1600));
  EXPECT_EQ(sut.delay(6), milliseconds(2000));
  EXPECT_EQ(sut.delay(7), milliseconds(2000));
  EXPECT_EQ(sut.delay(UINT32_MAX), milliseconds(2000)) << "no overflow after many failures";
}

TEST(RdmaPeerLinkRules, ACustomScheduleKeepsItsOwnBounds) {
  const ReconnectBackoff sut{.first = milliseconds(30), .most = milliseconds(100)};
  EXPECT_EQ(sut.delay(1), milliseconds(30));
  EXPECT_EQ(sut.delay(2), milliseconds(60));
  EXPECT_EQ(sut.delay(3), milliseconds(100));
  EXPECT_EQ(sut.delay(0), milliseconds(30)) << "0 failures counts as the first";
}

}  // namespace
}  // namespace axon::rdma
