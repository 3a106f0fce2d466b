// The RDMA control messages (transports/rdma/control_message.hpp): every kind
// round-trips through the documented little-endian layout (offsets pinned
// byte by byte), a GRANT holds 1..169 grants, and what another host sent is
// refused, with the field named, whenever a length, count, kind, version,
// enum value or grant cannot be.
#include "transports/rdma/control_message.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "transports/rdma/immediate.hpp"
#include "transports/rdma/little_endian.hpp"

namespace axon::rdma {
namespace {

namespace layout = control_layout;

constexpr PeerRegion kRegion{.base = 0x7F0000000000ULL, .length = 64ULL << 20};
constexpr std::uint32_t kStream = 0xA1B2C3D4U;

OpenFields sample_open() {
  return {.topic_id = 0x0123456789ABCDEFULL,
          .type_hash = 0xFEDCBA9876543210ULL,
          .writer_id = 0x11223344U,
          .largest_message_bytes = 65536,
          .reliability = WireReliability::kReliable,
          .overflow = WireOverflow::kBlockPublisher,
          .block_timeout_ns = 100'000'000};
}

GrantEntry grant_at(std::uint32_t i) {
  return {.address = kRegion.base + 4096ULL * i, .capacity_bytes = 4096, .slot = i, .size_class = 1};
}

std::vector<std::byte> open_bytes() {
  std::vector<std::byte> b(kControlSlotBytes);
  b.resize(encode_open(b, kStream, sample_open()));
  return b;
}

std::vector<std::byte> grant_bytes(std::uint32_t count) {
  std::vector<GrantEntry> grants;
  for (std::uint32_t i = 0; i < count; ++i) {
    grants.push_back(grant_at(i));
  }
  std::vector<std::byte> b(kControlSlotBytes);
  b.resize(encode_grant(b, kStream, grants, kRegion));
  return b;
}

ControlError parse(const std::vector<std::byte>& b) {
  ControlMessage out;
  return parse_control(b, kRegion, out);
}

TEST(RdmaControlMessage, SlotSizeAndGrantsPerMessageAreWhatTheHeaderSays) {
  EXPECT_EQ(kControlSlotBytes, 4096U);
  EXPECT_EQ(kMaxGrantsPerMessage, 169U);
  EXPECT_LE(kGrantHeaderBytes + kMaxGrantsPerMessage * kGrantEntryBytes, kControlSlotBytes);
  EXPECT_GT(kGrantHeaderBytes + (kMaxGrantsPerMessage + 1) * kGrantEntryBytes, kControlSlotBytes);
}

TEST(RdmaControlMessage, OpenRoundTripsWithEveryFieldAtItsOffset) {
  const std::vector<std::byte> b = open_bytes();
  ASSERT_EQ(b.size(), kOpenBytes);
  // Pinned layout: header, then OPEN's fields.
  EXPECT_EQ(le::load<std::uint32_t>(b, 0), 0x43525841U);
  EXPECT_EQ(static_cast<char>(b[0]), 'A');
  EXPECT_EQ(static_cast<char>(b[3]), 'C');
  EXPECT_EQ(le::load<std::uint8_t>(b, 4), 1);
  EXPECT_EQ(le::load<std::uint8_t>(b, 5), 1);
  EXPECT_EQ(le::load<std::uint16_t>(b, 6), 0);
  EXPECT_EQ(le::load<std::uint32_t>(b, 8), kOpenBytes);
  EXPECT_EQ(le::load<std::uint32_t>(b, 12), kStream);
  EXPECT_EQ(le::load<std::uint64_t>(b, 16), 0x0123456789ABCDEFULL);
  EXPECT_EQ(static_cast<std::uint8_t>(b[16]), 0xEF);  // little-endian
  EXPECT_EQ(le::load<std::uint64_t>(b, 24), 0xFEDCBA9876543210ULL);
  EXPECT_EQ(le::load<std::uint32_t>(b, 32), 0x11223344U);
  EXPECT_EQ(le::load<std::uint32_t>(b, 36), 65536U);
  EXPECT_EQ(le::load<std::uint64_t>(b, 40), 100'000'000U);
  EXPECT_EQ(le::load<std::uint8_t>(b, 48), 1);
  EXPECT_EQ(le::load<std::uint8_t>(b, 49), 4);
  EXPECT_EQ(le::load<std::uint16_t>(b, 50), 0);
  EXPECT_EQ(le::load<std::uint32_t>(b, 52), 0U);

  ControlMessage sut;
  ASSERT_EQ(parse_control(b, kRegion, sut), ControlError::kOk);
  EXPECT_EQ(sut.kind, ControlKind::kOpen);
  EXPECT_EQ(sut.stream_id, kStream);
  EXPECT_EQ(sut.open, sample_open());
}

TEST(RdmaControlMessage, CloseAndWantRoundTrip) {
  std::array<std::byte, kControlSlotBytes> buffer{};
  ASSERT_EQ(encode_close(buffer, 7), kCloseBytes);
  ControlMessage sut;
  ASSERT_EQ(parse_control(std::span(buffer).first(kCloseBytes), kRegion, sut), ControlError::kOk);
  EXPECT_EQ(sut.kind, ControlKind::kClose);
  EXPECT_EQ(sut.stream_id, 7U);
  EXPECT_EQ(le::load<std::uint8_t>(buffer, layout::header::kKind), 2);

  for (const std::uint32_t waiting : {0U, 1U, 0xFFFFFFFFU}) {  // 0: no longer waiting
    ASSERT_EQ(encode_want(buffer, 9, waiting), kWantBytes);
    EXPECT_EQ(le::load<std::uint8_t>(buffer, layout::header::kKind), 4);
    EXPECT_EQ(le::load<std::uint32_t>(buffer, 16), waiting);
    EXPECT_EQ(le::load<std::uint32_t>(buffer, 20), 0U);
    ASSERT_EQ(parse_control(std::span(buffer).first(kWantBytes), kRegion, sut), ControlError::kOk);
    EXPECT_EQ(sut.kind, ControlKind::kWant);
    EXPECT_EQ(sut.stream_id, 9U);
    EXPECT_EQ(sut.messages_waiting, waiting);
  }
}

TEST(RdmaControlMessage, GrantWithTheMostGrantsThatFitRoundTrips) {
  const std::vector<std::byte> b = grant_bytes(kMaxGrantsPerMessage);
  ASSERT_EQ(b.size(), kGrantHeaderBytes + 169 * kGrantEntryBytes);
  EXPECT_EQ(le::load<std::uint8_t>(b, 5), 3);
  EXPECT_EQ(le::load<std::uint32_t>(b, 16), 169U);
  EXPECT_EQ(le::load<std::uint32_t>(b, 20), 0U);
  // The second entry, field by field.
  const std::size_t e = 24 + 24;
  EXPECT_EQ(le::load<std::uint64_t>(b, e + 0), kRegion.base + 4096);
  EXPECT_EQ(le::load<std::uint32_t>(b, e + 8), 4096U);
  EXPECT_EQ(le::load<std::uint32_t>(b, e + 12), 1U);
  EXPECT_EQ(le::load<std::uint8_t>(b, e + 16), 1);
  EXPECT_EQ(le::load<std::uint8_t>(b, e + 17), 0);
  EXPECT_EQ(le::load<std::uint16_t>(b, e + 18), 0);
  EXPECT_EQ(le::load<std::uint32_t>(b, e + 20), 0U);

  ControlMessage sut;
  ASSERT_EQ(parse_control(b, kRegion, sut), ControlError::kOk);
  EXPECT_EQ(sut.kind, ControlKind::kGrant);
  ASSERT_EQ(sut.grant.count, 169U);
  for (std::uint32_t i = 0; i < 169; ++i) {
    EXPECT_EQ(sut.grant.entry(i), grant_at(i)) << "grant " << i;
  }
}

TEST(RdmaControlMessage, OneMoreGrantThanFitsIsNotEncoded) {
  std::vector<GrantEntry> grants(kMaxGrantsPerMessage + 1, grant_at(0));
  std::vector<std::byte> b(2 * kControlSlotBytes);  // room enough: the limit is the slot's
  EXPECT_EQ(encode_grant(b, kStream, grants, kRegion), 0U);
}

// Zero grants is refused both ways: a GRANT that names no chunk means
// nothing (there is no revocation to carry), the encoder never sends one, and
// "every GRANT names a chunk" is what the sender's credit FIFO may rely on.
TEST(RdmaControlMessage, GrantWithZeroGrantsIsRefused) {
  std::array<std::byte, kControlSlotBytes> buffer{};
  EXPECT_EQ(encode_grant(buffer, kStream, {}, kRegion), 0U);
  std::vector<std::byte> b = grant_bytes(1);
  le::store<std::uint32_t>(b, layout::grant::kGrantCount, 0);
  b.resize(kGrantHeaderBytes);
  le::store<std::uint32_t>(b, layout::header::kMessageBytes, kGrantHeaderBytes);
  EXPECT_EQ(parse(b), ControlError::kZeroGrants);
}

TEST(RdmaControlMessage, EncodersRefuseWhatTheParserWouldRefuse) {
  std::array<std::byte, kControlSlotBytes> buffer{};
  EXPECT_EQ(encode_close(buffer, 0), 0U);
  EXPECT_EQ(encode_close(std::span(buffer).first(kCloseBytes - 1), 1), 0U);
  EXPECT_EQ(encode_open(std::span(buffer).first(kOpenBytes - 1), 1, sample_open()), 0U);
  OpenFields open = sample_open();
  open.overflow = static_cast<WireOverflow>(5);
  EXPECT_EQ(encode_open(buffer, 1, open), 0U);
  GrantEntry outside = grant_at(0);
  outside.address = kRegion.base + kRegion.length;
  EXPECT_EQ(encode_grant(buffer, 1, std::span(&outside, 1), kRegion), 0U);
}

TEST(RdmaControlMessage, RefusesATruncatedHeaderOrMoreThanASlot) {
  const std::vector<std::byte> b = open_bytes();
  EXPECT_EQ(parse({}), ControlError::kTruncatedHeader);
  EXPECT_EQ(parse({b.begin(), b.begin() + 15}), ControlError::kTruncatedHeader);
  std::vector<std::byte> big = grant_bytes(kMaxGrantsPerMessage);
  big.resize(kControlSlotBytes + 1);
  EXPECT_EQ(parse(big), ControlError::kLongerThanSlot);
}

TEST(RdmaControlMessage, RefusesAnotherMagicVersionOrKind) {
  std::vector<std::byte> b = open_bytes();
  b[0] = std::byte{'a'};
  EXPECT_EQ(parse(b), ControlError::kBadMagic);
  b = open_bytes();
  b[layout::header::kVersion] = std::byte{2};
  EXPECT_EQ(parse(b), ControlError::kUnsupportedVersion);
  for (const std::uint8_t kind : {0, 5, 255}) {
    b = open_bytes();
    b[layout::header::kKind] = std::byte{kind};
    EXPECT_EQ(parse(b), ControlError::kUnknownKind) << "kind " << int{kind};
  }
}

TEST(RdmaControlMessage, RefusesALengthThatIsNotTheBytesReceived) {
  std::vector<std::byte> b = open_bytes();
  le::store<std::uint32_t>(b, layout::header::kMessageBytes, kOpenBytes + 1);
  EXPECT_EQ(parse(b), ControlError::kLengthPastBuffer);
  le::store<std::uint32_t>(b, layout::header::kMessageBytes, 0xFFFFFFFFU);
  EXPECT_EQ(parse(b), ControlError::kLengthPastBuffer);
  le::store<std::uint32_t>(b, layout::header::kMessageBytes, kOpenBytes - 1);
  EXPECT_EQ(parse(b), ControlError::kLengthBelowBuffer);
  // A consistent length that is not OPEN's size.
  b.resize(kOpenBytes - 8);
  le::store<std::uint32_t>(b, layout::header::kMessageBytes, kOpenBytes - 8);
  EXPECT_EQ(parse(b), ControlError::kWrongSizeForKind);
}

TEST(RdmaControlMessage, RefusesAGrantCountPastTheLength) {
  std::vector<std::byte> b = grant_bytes(3);
  le::store<std::uint32_t>(b, layout::grant::kGrantCount, 4);
  EXPECT_EQ(parse(b), ControlError::kWrongSizeForKind);
  le::store<std::uint32_t>(b, layout::grant::kGrantCount, 2);
  EXPECT_EQ(parse(b), ControlError::kWrongSizeForKind);
  le::store<std::uint32_t>(b, layout::grant::kGrantCount, 170);
  EXPECT_EQ(parse(b), ControlError::kTooManyGrants);
  le::store<std::uint32_t>(b, layout::grant::kGrantCount, 0xFFFFFFFFU);  // would overflow a 32-bit product
  EXPECT_EQ(parse(b), ControlError::kTooManyGrants);
}

TEST(RdmaControlMessage, RefusesStreamIdZeroAndReservedBitsInEveryKind) {
  std::vector<std::byte> b = open_bytes();
  le::store<std::uint32_t>(b, layout::header::kStreamId, 0);
  EXPECT_EQ(parse(b), ControlError::kZeroStreamId);
  for (const std::size_t at : {layout::header::kReserved, layout::open::kReserved16, layout::open::kReserved32}) {
    b = open_bytes();
    b[at + 1] = std::byte{1};
    EXPECT_EQ(parse(b), ControlError::kReservedNotZero) << "offset " << at;
  }
  std::array<std::byte, kControlSlotBytes> want{};
  ASSERT_EQ(encode_want(want, 1, 3), kWantBytes);
  want[layout::want::kReserved] = std::byte{1};
  EXPECT_EQ(parse({want.begin(), want.begin() + kWantBytes}), ControlError::kReservedNotZero);
  for (const std::size_t at :
       {layout::grant::kReserved, kGrantHeaderBytes + kGrantEntryBytes + layout::grant::kReserved8,
        kGrantHeaderBytes + layout::grant::kReserved16 + 1, kGrantHeaderBytes + layout::grant::kReserved32 + 3}) {
    b = grant_bytes(2);
    b[at] = std::byte{0x80};
    EXPECT_EQ(parse(b), ControlError::kReservedNotZero) << "offset " << at;
  }
}

TEST(RdmaControlMessage, RefusesOpenEnumsAndTimeoutOutOfRange) {
  std::vector<std::byte> b = open_bytes();
  b[layout::open::kReliability] = std::byte{2};
  EXPECT_EQ(parse(b), ControlError::kBadReliability);
  b = open_bytes();
  b[layout::open::kOverflow] = std::byte{5};
  EXPECT_EQ(parse(b), ControlError::kBadOverflow);
  b = open_bytes();
  le::store<std::uint64_t>(b, layout::open::kBlockTimeoutNs,
                           static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1);
  EXPECT_EQ(parse(b), ControlError::kBadBlockTimeout);
  le::store<std::uint64_t>(b, layout::open::kBlockTimeoutNs, std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(parse(b), ControlError::kOk);
}

// The second of two grants broken in one field; the first stays valid, so
// the whole list is checked, not its head.
ControlError parse_with_second_grant(const GrantEntry& g, const PeerRegion& region = kRegion) {
  std::vector<std::byte> b = grant_bytes(2);
  const std::size_t e = kGrantHeaderBytes + kGrantEntryBytes;
  le::store<std::uint64_t>(b, e + layout::grant::kAddress, g.address);
  le::store<std::uint32_t>(b, e + layout::grant::kCapacityBytes, g.capacity_bytes);
  le::store<std::uint32_t>(b, e + layout::grant::kSlot, g.slot);
  le::store<std::uint8_t>(b, e + layout::grant::kSizeClass, g.size_class);
  ControlMessage out;
  return parse_control(b, region, out);
}

TEST(RdmaControlMessage, RefusesGrantsWithABadClassCapacityOrSlot) {
  GrantEntry g = grant_at(1);
  g.size_class = 16;
  EXPECT_EQ(parse_with_second_grant(g), ControlError::kBadSizeClass);
  g = grant_at(1);
  g.capacity_bytes = 0;
  EXPECT_EQ(parse_with_second_grant(g), ControlError::kZeroCapacity);
  g.capacity_bytes = 1U << 28;  // 256 MiB: no slot bit left in the immediate
  EXPECT_EQ(parse_with_second_grant(g, {.base = 0, .length = ~0ULL}), ControlError::kCapacityTooLarge);
  g.capacity_bytes = (1U << 28) - 1;  // one slot
  g.slot = 0;
  g.address = 0;
  EXPECT_EQ(parse_with_second_grant(g, {.base = 0, .length = ~0ULL}), ControlError::kOk);
  g = grant_at(1);
  g.slot = max_grant_slots(4096);  // 4 KiB: 15 slot bits
  EXPECT_EQ(parse_with_second_grant(g), ControlError::kSlotOutOfRange);
  g.slot = max_grant_slots(4096) - 1;
  EXPECT_EQ(parse_with_second_grant(g), ControlError::kOk);
}

TEST(RdmaControlMessage, RefusesGrantsThatOverflowOrLeaveTheRegion) {
  const PeerRegion everything{.base = 0, .length = ~0ULL};
  GrantEntry g = grant_at(1);
  g.address = ~0ULL - 4096;  // address + capacity is 2^64 - 1: fits
  EXPECT_EQ(parse_with_second_grant(g, everything), ControlError::kOk);
  g.address = ~0ULL - 4095;  // one more: address + capacity is 2^64, past a u64
  EXPECT_EQ(parse_with_second_grant(g, everything), ControlError::kAddressOverflow);
  g.address = ~0ULL;
  EXPECT_EQ(parse_with_second_grant(g, everything), ControlError::kAddressOverflow);

  g = grant_at(1);
  g.address = kRegion.base - 1;
  EXPECT_EQ(parse_with_second_grant(g), ControlError::kOutsideRegion);
  g.address = kRegion.base + kRegion.length - 4096;  // the last chunk of the region
  EXPECT_EQ(parse_with_second_grant(g), ControlError::kOk);
  g.address += 1;
  EXPECT_EQ(parse_with_second_grant(g), ControlError::kOutsideRegion);
  g.address = kRegion.base + kRegion.length;
  EXPECT_EQ(parse_with_second_grant(g), ControlError::kOutsideRegion);
}

TEST(RdmaControlMessage, ARefusalLeavesTheOutputUntouched) {
  ControlMessage out;
  out.stream_id = 42;
  std::vector<std::byte> b = open_bytes();
  b[layout::open::kOverflow] = std::byte{9};
  ASSERT_NE(parse_control(b, kRegion, out), ControlError::kOk);
  EXPECT_EQ(out.stream_id, 42U);
}

TEST(RdmaControlMessage, EveryErrorHasItsOwnWordsNamingTheField) {
  std::vector<std::string> seen;
  for (std::uint8_t e = 1; e < static_cast<std::uint8_t>(ControlError::kCount); ++e) {
    const std::string text(to_string(static_cast<ControlError>(e)));
    EXPECT_EQ(text.rfind("rdma control: ", 0), 0U) << text;
    EXPECT_NE(text, "rdma control: unknown parse error");
    for (const std::string& other : seen) {
      EXPECT_NE(text, other);
    }
    seen.push_back(text);
  }
  EXPECT_NE(std::string(to_string(ControlError::kOutsideRegion)).find("GRANT entry"), std::string::npos);
}

}  // namespace
}  // namespace axon::rdma
