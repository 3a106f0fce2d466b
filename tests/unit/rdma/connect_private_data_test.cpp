// The rdma_cm private data (transports/rdma/connect_private_data.hpp): every
// field round-trips through the documented little-endian layout, and what
// another host sent is refused, with the field named, when it is short, of
// another version, or describes a region, receive queue or port that cannot
// be.
#include "transports/rdma/connect_private_data.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace axon::rdma {
namespace {

ConnectPrivateData sample() {
  return {.version = kConnectProtocolVersion,
          .sender_id = 0x0123456789ABCDEFULL,
          .incarnation = 0xFEDCBA9876543210ULL,
          .abi_hash = 0x1122334455667788ULL,
          .rkey = 0xA1B2C3D4U,
          .base = 0x00007F0012345000ULL,
          .length = 64ULL << 20,
          .receive_depth = 256,
          .max_message_bytes = 8U << 20};  // rxe's max_msg_sz
}

std::vector<std::byte> bytes_of(const ConnectPrivateData& d) {
  const auto b = encode_connect_private_data(d);
  return {b.begin(), b.end()};
}

void put_u64(std::vector<std::byte>& b, std::size_t offset, std::uint64_t v) {
  for (std::size_t i = 0; i < 8; ++i) {
    b[offset + i] = static_cast<std::byte>((v >> (8 * i)) & 0xFFU);
  }
}

std::string refusal(const std::vector<std::byte>& b) {
  auto r = decode_connect_private_data(b);
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : std::string(r.error().message());
}

TEST(RdmaConnectPrivateData, FitsTheCmRequestAndEveryFieldRoundTrips) {
  EXPECT_LE(kConnectPrivateDataBytes, kCmReqPrivateDataMax);
  const auto d = sample();
  auto back = decode_connect_private_data(bytes_of(d));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back.value(), d);
  EXPECT_EQ(back->sender_id, d.sender_id);
  EXPECT_EQ(back->incarnation, d.incarnation);
  EXPECT_EQ(back->abi_hash, d.abi_hash);
  EXPECT_EQ(back->rkey, d.rkey);
  EXPECT_EQ(back->base, d.base);
  EXPECT_EQ(back->length, d.length);
  EXPECT_EQ(back->receive_depth, d.receive_depth);
  EXPECT_EQ(back->max_message_bytes, d.max_message_bytes);
}

TEST(RdmaConnectPrivateData, TheLayoutIsLittleEndianAtTheDocumentedOffsets) {
  const auto b = bytes_of(sample());
  ASSERT_EQ(b.size(), 56U);
  EXPECT_EQ(b[0], std::byte{kConnectProtocolVersion});
  EXPECT_EQ(b[1], std::byte{0});
  EXPECT_EQ(b[4], std::byte{0xD4});   // rkey, low byte first
  EXPECT_EQ(b[8], std::byte{0xEF});   // sender id
  EXPECT_EQ(b[16], std::byte{0x10});  // incarnation
  EXPECT_EQ(b[24], std::byte{0x88});  // ABI hash
  EXPECT_EQ(b[33], std::byte{0x50});  // base 0x...12345000
  EXPECT_EQ(b[42], std::byte{0x00});  // length 64 MiB = 0x04000000
  EXPECT_EQ(b[43], std::byte{0x04});
  EXPECT_EQ(b[48], std::byte{0x00});  // receive depth 256
  EXPECT_EQ(b[49], std::byte{0x01});
  EXPECT_EQ(b[52], std::byte{0x00});  // max_msg_sz 8 MiB = 0x00800000
  EXPECT_EQ(b[53], std::byte{0x00});
  EXPECT_EQ(b[54], std::byte{0x80});
  EXPECT_EQ(b[55], std::byte{0x00});
}

TEST(RdmaConnectPrivateData, TheCmsPaddingToTheFullSizeIsIgnored) {
  auto b = bytes_of(sample());
  b.resize(kCmRepPrivateDataMax, std::byte{0});
  auto back = decode_connect_private_data(b);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back.value(), sample());
}

TEST(RdmaConnectPrivateData, TooShortIsRefusedWithTheLength) {
  auto b = bytes_of(sample());
  b.resize(55);
  EXPECT_NE(refusal(b).find("55 bytes, at least 56"), std::string::npos);
  EXPECT_NE(refusal({}).find("0 bytes"), std::string::npos);
}

TEST(RdmaConnectPrivateData, AnotherVersionIsIncompatible) {
  auto d = sample();
  d.version = kConnectProtocolVersion + 1;
  auto r = decode_connect_private_data(bytes_of(d));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kIncompatible);
  EXPECT_NE(std::string(r.error().message()).find("version 3"), std::string::npos) << r.error().message();
  d.version = 1;  // before the port's max_msg_sz was carried
  r = decode_connect_private_data(bytes_of(d));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kIncompatible);
}

TEST(RdmaConnectPrivateData, AnEmptyRegionIsRefused) {
  auto d = sample();
  d.length = 0;
  EXPECT_NE(refusal(bytes_of(d)).find("length is 0"), std::string::npos);
}

TEST(RdmaConnectPrivateData, ARegionThatWrapsPastTheAddressSpaceIsRefused) {
  auto b = bytes_of(sample());
  put_u64(b, 32, ~std::uint64_t{0} - 4095);  // base
  put_u64(b, 40, 4096);                      // length: one byte past 2^64
  EXPECT_NE(refusal(b).find("wraps"), std::string::npos);
  put_u64(b, 40, 4095);  // ends exactly at 2^64 - 1
  EXPECT_TRUE(decode_connect_private_data(b).ok());
}

TEST(RdmaConnectPrivateData, AReceiveDepthOfZeroOrAboveTheBoundIsRefused) {
  auto d = sample();
  d.receive_depth = 0;
  EXPECT_NE(refusal(bytes_of(d)).find("receive queue depth 0"), std::string::npos);
  d.receive_depth = kMaxReceiveDepth + 1;
  EXPECT_NE(refusal(bytes_of(d)).find("receive queue depth 65537"), std::string::npos);
  d.receive_depth = kMaxReceiveDepth;
  EXPECT_TRUE(decode_connect_private_data(bytes_of(d)).ok());
}

TEST(RdmaConnectPrivateData, APortMaxMessageOfZeroOrAboveTheBoundIsRefused) {
  auto d = sample();
  d.max_message_bytes = 0;
  EXPECT_NE(refusal(bytes_of(d)).find("(max_msg_sz) 0 bytes, expected 1..2147483648"), std::string::npos);
  d.max_message_bytes = kMaxPortMessageBytes + 1;
  EXPECT_NE(refusal(bytes_of(d)).find("(max_msg_sz) 2147483649 bytes"), std::string::npos);
  d.max_message_bytes = kMaxPortMessageBytes;
  EXPECT_TRUE(decode_connect_private_data(bytes_of(d)).ok());
  d.max_message_bytes = 1;
  EXPECT_TRUE(decode_connect_private_data(bytes_of(d)).ok());
}

TEST(RdmaConnectPrivateData, EveryRejectReasonRoundTripsAndOtherBytesAreNotOne) {
  for (auto r : {RejectReason::kMalformedPrivateData, RejectReason::kVersion, RejectReason::kAbiHash,
                 RejectReason::kSenderId, RejectReason::kIncarnation, RejectReason::kNotExpected}) {
    const auto b = encode_reject(r);
    EXPECT_EQ(decode_reject(b), r);
    EXPECT_NE(to_string(r), "an unknown reason");
  }
  EXPECT_EQ(decode_reject({}), std::nullopt);  // the CM's own reject carries nothing of ours
  auto b = encode_reject(RejectReason::kAbiHash);
  b[0] = std::byte{'B'};
  EXPECT_EQ(decode_reject(b), std::nullopt);
  b = encode_reject(RejectReason::kAbiHash);
  b[6] = std::byte{0};
  EXPECT_EQ(decode_reject(b), std::nullopt);
  b[6] = std::byte{7};
  EXPECT_EQ(decode_reject(b), std::nullopt);
  EXPECT_NE(to_string(RejectReason::kAbiHash).find("ABI hash"), std::string_view::npos);
}

}  // namespace
}  // namespace axon::rdma
