// How send_batch()'s datagrams become sendmmsg messages: runs of equal
// datagrams to one destination as one segmented (UDP_SEGMENT) message each.
#include "transports/udp/outgoing_batch.hpp"

#include <gtest/gtest.h>
#include <netinet/udp.h>

#include <array>
#include <cstring>
#include <vector>

namespace axon::udp {
namespace {

constexpr Endpoint kA{.ipv4 = 0x7F000001, .port = 4000};
constexpr Endpoint kB{.ipv4 = 0x7F000002, .port = 4000};

struct Datagrams {
  std::array<std::byte, 64> header{};
  std::vector<std::byte> payload = std::vector<std::byte>(1408);
  std::vector<OutgoingDatagram> list;
  void add(Endpoint to, std::size_t payload_bytes) {
    list.push_back(OutgoingDatagram{.header = header, .payload = std::span(payload).first(payload_bytes), .to = to});
  }
};

std::uint16_t segment_of(const mmsghdr& message) {
  const cmsghdr* control = CMSG_FIRSTHDR(&message.msg_hdr);
  if (control == nullptr || control->cmsg_level != SOL_UDP || control->cmsg_type != UDP_SEGMENT) {
    return 0;
  }
  std::uint16_t segment = 0;
  std::memcpy(&segment, CMSG_DATA(control), sizeof(segment));
  return segment;
}

TEST(OutgoingBatch, ARunToOneDestinationIsOneSegmentedMessage) {
  Datagrams d;
  for (int i = 0; i < 10; ++i) {
    d.add(kA, 1408);
  }
  d.add(kA, 100);  // the last may be shorter
  OutgoingBatch sut;

  EXPECT_EQ(sut.build(d.list, true), 11U);

  ASSERT_EQ(sut.message_count(), 1U);
  EXPECT_TRUE(sut.segmented(0));
  EXPECT_EQ(segment_of(sut.messages()[0]), 64 + 1408);
  EXPECT_EQ(sut.messages()[0].msg_hdr.msg_iovlen, 22U);
  EXPECT_EQ(sut.datagrams_in_first(1), 11U);
}

TEST(OutgoingBatch, ADestinationChangeOrAShorterDatagramEndsARun) {
  Datagrams d;
  for (int i = 0; i < 10; ++i) {
    d.add(kA, 1408);
  }
  for (int i = 0; i < 9; ++i) {
    d.add(kB, 1408);
  }
  d.add(kB, 700);
  for (int i = 0; i < 10; ++i) {
    d.add(kB, 1408);  // after a shorter one: a new run
  }
  OutgoingBatch sut;

  EXPECT_EQ(sut.build(d.list, true), 30U);

  ASSERT_EQ(sut.message_count(), 3U);
  EXPECT_EQ(sut.datagrams_in_first(1), 10U);
  EXPECT_EQ(sut.datagrams_in_first(2), 20U);
  EXPECT_TRUE(sut.segmented(2));
}

TEST(OutgoingBatch, AShortRunGoesOneDatagramPerMessage) {
  Datagrams d;
  d.add(kA, 1408);
  d.add(kA, 640);  // a 2 KiB message: two fragments
  OutgoingBatch sut;

  EXPECT_EQ(sut.build(d.list, true), 2U);

  ASSERT_EQ(sut.message_count(), 2U);
  EXPECT_FALSE(sut.segmented(0));
  EXPECT_FALSE(sut.segmented(1));
  EXPECT_EQ(segment_of(sut.messages()[0]), 0);
}

TEST(OutgoingBatch, ARunStopsWhereOnePacketsLengthWouldOverflow) {
  Datagrams d;
  for (int i = 0; i < 100; ++i) {
    d.add(kA, 1408);
  }
  OutgoingBatch sut;

  EXPECT_EQ(sut.build(d.list, true), 100U);

  // 44 datagrams of 1472 B fit 65507 B; 45 do not.
  ASSERT_EQ(sut.message_count(), 3U);
  EXPECT_EQ(sut.datagrams_in_first(1), 44U);
  EXPECT_EQ(sut.datagrams_in_first(2), 88U);
}

TEST(OutgoingBatch, SmallDatagramsStopAtTheKernelsSegmentLimit) {
  Datagrams d;
  for (int i = 0; i < 100; ++i) {
    d.add(kA, 16);
  }
  OutgoingBatch sut;

  (void)sut.build(d.list, true);

  EXPECT_EQ(sut.datagrams_in_first(1), OutgoingBatch::kMaxSegments);
}

TEST(OutgoingBatch, WithoutSegmentationEveryDatagramIsAMessageOfItsOwn) {
  Datagrams d;
  for (int i = 0; i < 200; ++i) {
    d.add(kA, 1408);
  }
  OutgoingBatch sut;

  EXPECT_EQ(sut.build(d.list, false), OutgoingBatch::kMaxDatagrams);

  EXPECT_EQ(sut.message_count(), OutgoingBatch::kMaxDatagrams);
  EXPECT_FALSE(sut.segmented(0));
  EXPECT_EQ(sut.messages()[0].msg_hdr.msg_controllen, 0U);
}

TEST(OutgoingBatch, AnEmptyPayloadSendsTheHeaderAlone) {
  Datagrams d;
  d.add(kA, 0);
  OutgoingBatch sut;

  EXPECT_EQ(sut.build(d.list, true), 1U);

  EXPECT_EQ(sut.messages()[0].msg_hdr.msg_iovlen, 1U);
}

}  // namespace
}  // namespace axon::udp
