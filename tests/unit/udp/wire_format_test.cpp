#include "transports/udp/wire_format.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/unit/udp/parse_both.hpp"

namespace axon::udp {
namespace {

constexpr std::uint64_t kSender = 0x1122334455667788ULL;
constexpr std::uint64_t kTopic = 0xA1A2A3A4A5A6A7A8ULL;

std::vector<std::byte> message_of(std::size_t size) {
  std::vector<std::byte> message(size);
  for (std::size_t i = 0; i < size; ++i) {
    message[i] = static_cast<std::byte>((i * 131 + 7) & 0xFF);
  }
  return message;
}

std::vector<std::byte> encode(const DataFragment& fragment, bool checksum = false) {
  std::vector<std::byte> out(kMaxDatagramBytes);
  const std::size_t size = encode_data(out, kSender, fragment, checksum);
  out.resize(size);
  return out;
}

// A valid 3-fragment message's middle fragment, as bytes.
std::vector<std::byte> valid_data(const std::vector<std::byte>& message) {
  return encode(make_fragment(kTopic, 9, 42, message, 1000, 1));
}

void put_u32(std::vector<std::byte>& d, std::size_t at, std::uint32_t v) {
  for (std::size_t i = 0; i < 4; ++i) {
    d[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
  }
}
void put_u64(std::vector<std::byte>& d, std::size_t at, std::uint64_t v) {
  put_u32(d, at, static_cast<std::uint32_t>(v));
  put_u32(d, at + 4, static_cast<std::uint32_t>(v >> 32));
}

// Every case goes through both parsers (the whole datagram, and its header and
// payload in separate buffers as a scatter receive leaves them): they must agree.
ParseError parse_error(const std::vector<std::byte>& d, const WireLimits& limits = {}) {
  ParsedDatagram out;
  return test::parse_both(d, limits, out);
}

TEST(WireFormat, DataRoundTripsEveryField) {
  const auto message = message_of(2500);
  const DataFragment sent = make_fragment(kTopic, 9, 42, message, 1000, 2);
  const auto bytes = encode(sent);
  ASSERT_EQ(bytes.size(), kDataHeaderBytes + 500);

  auto sut = parse_datagram(bytes);

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->header.type, DatagramType::kData);
  EXPECT_EQ(sut->header.sender_id, kSender);
  EXPECT_EQ(sut->header.datagram_bytes, bytes.size());
  const auto& got = sut->data;
  EXPECT_EQ(got.topic_id, kTopic);
  EXPECT_EQ(got.writer_id, 9U);
  EXPECT_EQ(got.sequence, 42U);
  EXPECT_EQ(got.total_bytes, 2500U);
  EXPECT_EQ(got.fragment_index, 2U);
  EXPECT_EQ(got.fragment_count, 3U);
  EXPECT_EQ(got.fragment_bytes, 1000U);
  ASSERT_EQ(got.payload.size(), 500U);
  EXPECT_TRUE(std::equal(got.payload.begin(), got.payload.end(), message.begin() + 2000));
  EXPECT_EQ(got.payload.data(), bytes.data() + kDataHeaderBytes);  // a view, not a copy
}

TEST(WireFormat, IsLittleEndianWithTheDocumentedOffsets) {
  const auto message = message_of(10);
  const auto bytes = encode(make_fragment(kTopic, 0x01020304, 5, message, 1408, 0));
  EXPECT_EQ(bytes[0], std::byte{'A'});
  EXPECT_EQ(bytes[3], std::byte{'U'});
  EXPECT_EQ(bytes[4], std::byte{kWireVersion});
  EXPECT_EQ(bytes[5], std::byte{1});
  EXPECT_EQ(bytes[8], std::byte{0x88});   // sender id, low byte first
  EXPECT_EQ(bytes[20], std::byte{74});    // datagram bytes = 64 + 10
  EXPECT_EQ(bytes[40], std::byte{0x04});  // writer id
  EXPECT_EQ(bytes[60], std::byte{10});    // payload bytes
}

TEST(WireFormat, ChecksummedDatagramsRoundTripAndDetectCorruption) {
  const auto message = message_of(3000);
  auto bytes = encode(make_fragment(kTopic, 1, 7, message, 1408, 1), true);
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(parse_error(bytes), ParseError::kOk);
  EXPECT_EQ(parse_error(bytes, {.require_checksum = true}), ParseError::kOk);

  bytes[kDataHeaderBytes + 100] ^= std::byte{0x01};
  EXPECT_EQ(parse_error(bytes), ParseError::kBadChecksum);
}

TEST(WireFormat, DataHeaderAloneGivesTheSameBytesAsTheWholeDatagram) {
  const auto message = message_of(1500);
  const DataFragment fragment = make_fragment(kTopic, 1, 7, message, 1408, 0);
  const auto whole = encode(fragment, true);
  std::array<std::byte, kDataHeaderBytes> header{};
  ASSERT_EQ(encode_data_header(header, kSender, fragment, true), whole.size());
  EXPECT_TRUE(std::equal(header.begin(), header.end(), whole.begin()));
}

TEST(WireFormat, EmptyMessageIsOneEmptyFragment) {
  const std::vector<std::byte> empty;
  const auto bytes = encode(make_fragment(kTopic, 1, 1, empty, 1408, 0));
  ASSERT_EQ(bytes.size(), kDataHeaderBytes);
  auto sut = parse_datagram(bytes);
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->data.fragment_count, 1U);
  EXPECT_TRUE(sut->data.payload.empty());
}

TEST(WireFormat, HeartbeatGapAndNackRoundTrip) {
  std::array<std::byte, 2048> out{};
  ASSERT_EQ(encode_heartbeat(out, kSender,
                             {.topic_id = kTopic, .first_sequence = 3, .last_sequence = 9, .writer_id = 4}, true),
            kHeartbeatBytes);
  auto heartbeat = parse_datagram(std::span(out).first(kHeartbeatBytes));
  ASSERT_TRUE(heartbeat.ok()) << heartbeat.error().message();
  const auto& h = heartbeat->heartbeat;
  EXPECT_EQ(h.topic_id, kTopic);
  EXPECT_EQ(h.first_sequence, 3U);
  EXPECT_EQ(h.last_sequence, 9U);
  EXPECT_EQ(h.writer_id, 4U);

  ASSERT_EQ(encode_gap(out, kSender, {.topic_id = kTopic, .first_sequence = 3, .end_sequence = 5, .writer_id = 4}),
            kGapBytes);
  auto gap = parse_datagram(std::span(out).first(kGapBytes));
  ASSERT_TRUE(gap.ok()) << gap.error().message();
  EXPECT_EQ(gap->gap.end_sequence, 5U);

  const std::array<NackRange, 2> ranges{NackRange{.sequence = 10, .first_fragment = 3, .end_fragment = 7},
                                        NackRange{.sequence = 11, .first_fragment = 0, .end_fragment = kAllFragments}};
  const std::size_t size = encode_nack(out, kSender, 77, kTopic, 4, ranges, true);
  ASSERT_EQ(size, kNackHeaderBytes + 2 * kNackRangeBytes);
  auto nack = parse_datagram(std::span(out).first(size));
  ASSERT_TRUE(nack.ok()) << nack.error().message();
  const auto& n = nack->nack;
  EXPECT_EQ(n.target_sender_id, 77U);
  EXPECT_EQ(n.writer_id, 4U);
  ASSERT_EQ(n.range_count, 2U);
  EXPECT_EQ(n.range(0).sequence, 10U);
  EXPECT_EQ(n.range(0).first_fragment, 3U);
  EXPECT_EQ(n.range(0).end_fragment, 7U);
  EXPECT_EQ(n.range(1).end_fragment, kAllFragments);
}

TEST(WireFormat, HeartbeatMayDescribeAnEmptyHistory) {
  std::array<std::byte, kHeartbeatBytes> out{};
  ASSERT_EQ(encode_heartbeat(out, kSender, {.first_sequence = 1, .last_sequence = 0}), kHeartbeatBytes);
  EXPECT_TRUE(parse_datagram(out).ok());
}

TEST(WireFormat, EncodersRefuseWhatTheParserWouldRefuse) {
  std::array<std::byte, 256> small{};
  const auto message = message_of(3000);
  EXPECT_EQ(encode_data(small, kSender, make_fragment(kTopic, 1, 1, message, 1000, 0)), 0U) << "buffer too small";
  std::vector<std::byte> big(kMaxDatagramBytes);
  EXPECT_EQ(encode_data(big, 0, make_fragment(kTopic, 1, 1, message, 1000, 0)), 0U) << "sender 0";
  EXPECT_EQ(encode_data(big, kSender, make_fragment(kTopic, 1, 0, message, 1000, 0)), 0U) << "sequence 0";
  EXPECT_EQ(encode_data(big, kSender, make_fragment(kTopic, 1, 1, message, 1000, 3)), 0U) << "index >= count";
  EXPECT_EQ(encode_data(big, kSender, make_fragment(kTopic, 1, 1, message, 0, 0)), 0U) << "fragment size 0";
  EXPECT_EQ(encode_heartbeat(big, kSender, {.first_sequence = 5, .last_sequence = 3}), 0U);
  EXPECT_EQ(encode_gap(big, kSender, {.first_sequence = 5, .end_sequence = 5}), 0U);
  EXPECT_EQ(encode_nack(big, kSender, 1, kTopic, 1, {}), 0U) << "no ranges";
  std::array<NackRange, kMaxNackRanges + 1> too_many{};
  too_many.fill({.sequence = 1, .first_fragment = 0, .end_fragment = 1});
  EXPECT_EQ(encode_nack(big, kSender, 1, kTopic, 1, too_many), 0U);
}

// ---- Malformed datagrams: each breaks exactly one rule.

TEST(WireFormatMalformed, EmptyDatagramIsATruncatedHeader) { EXPECT_EQ(parse_error({}), ParseError::kTruncatedHeader); }

TEST(WireFormatMalformed, EveryTruncationIsRefused) {
  const auto message = message_of(2500);
  const auto bytes = valid_data(message);
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    const std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size));
    const ParseError error = parse_error(cut);
    EXPECT_NE(error, ParseError::kOk) << "size " << size;
    if (size < kCommonHeaderBytes) {
      EXPECT_EQ(error, ParseError::kTruncatedHeader);
    } else {
      EXPECT_EQ(error, ParseError::kLengthMismatch);  // datagram_bytes says more
    }
  }
}

TEST(WireFormatMalformed, ShortBodyWithAMatchingLengthIsATruncatedBody) {
  const auto message = message_of(2500);
  auto bytes = valid_data(message);
  bytes.resize(40);
  put_u32(bytes, 20, 40);
  EXPECT_EQ(parse_error(bytes), ParseError::kTruncatedBody);
}

TEST(WireFormatMalformed, BadMagicVersionTypeFlagsReservedAndSender) {
  const auto message = message_of(2500);
  const auto good = valid_data(message);
  struct Case {
    std::size_t offset;
    std::byte value;
    ParseError expected;
  };
  for (const Case c :
       {Case{0, std::byte{'B'}, ParseError::kBadMagic},
        Case{4, std::byte{kWireVersion + 1}, ParseError::kUnsupportedVersion},
        Case{4, std::byte{kWireVersion - 1}, ParseError::kUnsupportedVersion},
        Case{5, std::byte{0}, ParseError::kUnknownType}, Case{5, std::byte{7}, ParseError::kUnknownType},
        Case{6, std::byte{0x80}, ParseError::kUnknownFlags}, Case{7, std::byte{1}, ParseError::kReservedNotZero},
        Case{16, std::byte{1}, ParseError::kReservedNotZero}}) {
    auto bytes = good;
    bytes[c.offset] = c.value;
    EXPECT_EQ(parse_error(bytes), c.expected) << "offset " << c.offset;
  }
  auto bytes = good;
  put_u64(bytes, 8, 0);
  EXPECT_EQ(parse_error(bytes), ParseError::kZeroSenderId);
}

TEST(WireFormatMalformed, ResultCarriesCodeAndReason) {
  std::vector<std::byte> bytes = valid_data(message_of(2500));
  bytes[4] = std::byte{9};
  auto sut = parse_datagram(bytes);
  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kIncompatible);
  EXPECT_EQ(sut.error().message(), to_string(ParseError::kUnsupportedVersion));
  bytes[4] = std::byte{kWireVersion};
  bytes[0] = std::byte{0};
  EXPECT_EQ(parse_datagram(bytes).error().code(), ErrorCode::kMalformed);
}

TEST(WireFormatMalformed, LengthFieldMustMatchTheDatagram) {
  auto bytes = valid_data(message_of(2500));
  put_u32(bytes, 20, static_cast<std::uint32_t>(bytes.size() - 1));
  EXPECT_EQ(parse_error(bytes), ParseError::kLengthMismatch);
  bytes = valid_data(message_of(2500));
  put_u32(bytes, 60, 999);  // payload_bytes
  EXPECT_EQ(parse_error(bytes), ParseError::kPayloadLengthMismatch);
}

TEST(WireFormatMalformed, OversizedDatagramIsRefused) {
  std::vector<std::byte> bytes(kMaxDatagramBytes + 1);
  EXPECT_EQ(parse_error(bytes), ParseError::kDatagramTooLarge);
}

TEST(WireFormatMalformed, DataFieldsAreCheckedAgainstEachOther) {
  const auto message = message_of(2500);
  struct Case {
    const char* what;
    std::size_t offset;
    std::uint32_t value;
    ParseError expected;
  };
  // The valid datagram: total 2500, fragment 1000, count 3, index 1, payload 1000.
  for (const Case c : {
           Case{"index == count", 48, 3, ParseError::kFragmentIndexOutOfRange},
           Case{"index huge", 48, 0xFFFFFFFF, ParseError::kFragmentIndexOutOfRange},
           Case{"count 0", 52, 0, ParseError::kZeroFragmentCount},
           Case{"count too high", 52, 4, ParseError::kFragmentCountMismatch},
           Case{"count too low", 52, 2, ParseError::kFragmentCountMismatch},
           Case{"fragment size 0", 56, 0, ParseError::kZeroFragmentSize},
           Case{"fragment size vs count", 56, 1250, ParseError::kFragmentCountMismatch},
           Case{"fragment size above limit", 56, 70000, ParseError::kFragmentSizeTooLarge},
           Case{"total vs count", 44, 3500, ParseError::kFragmentCountMismatch},
           Case{"total above 16 MiB", 44, 16U * 1024 * 1024 + 1, ParseError::kMessageTooLarge},
           Case{"total huge", 44, 0xFFFFFFFF, ParseError::kMessageTooLarge},
       }) {
    auto bytes = valid_data(message);
    put_u32(bytes, c.offset, c.value);
    EXPECT_EQ(parse_error(bytes), c.expected) << c.what;
  }
  auto bytes = valid_data(message);
  put_u64(bytes, 32, 0);
  EXPECT_EQ(parse_error(bytes), ParseError::kZeroSequence);
}

TEST(WireFormatMalformed, LastFragmentMustCarryTheRemainder) {
  const auto message = message_of(2500);
  auto bytes = valid_data(message);
  put_u32(bytes, 48, 2);  // index 2 of 3 must carry 500 bytes, not 1000
  EXPECT_EQ(parse_error(bytes), ParseError::kFragmentPayloadMismatch);
  bytes = encode(make_fragment(kTopic, 9, 42, message, 1000, 2));
  put_u32(bytes, 48, 0);  // index 0 must carry 1000 bytes, not 500
  EXPECT_EQ(parse_error(bytes), ParseError::kFragmentPayloadMismatch);
}

TEST(WireFormatMalformed, MessageLimitIsConfigurable) {
  const auto message = message_of(2500);
  EXPECT_EQ(parse_error(valid_data(message), {.max_message_bytes = 2499}), ParseError::kMessageTooLarge);
  EXPECT_EQ(parse_error(valid_data(message), {.max_message_bytes = 2500}), ParseError::kOk);
  EXPECT_EQ(parse_error(valid_data(message), {.max_fragment_bytes = 999}), ParseError::kFragmentSizeTooLarge);
  EXPECT_EQ(parse_error(valid_data(message), {.require_checksum = true}), ParseError::kChecksumMissing);
}

TEST(WireFormatMalformed, SixteenMebibytesIsAccepted) {
  constexpr std::uint32_t kTotal = 16U * 1024 * 1024;
  const std::vector<std::byte> message(kTotal);
  const auto count = static_cast<std::uint32_t>(fragment_count_for(kTotal, kMtu1500FragmentBytes));
  EXPECT_EQ(count, 11916U);
  EXPECT_EQ(parse_error(encode(make_fragment(kTopic, 1, 1, message, kMtu1500FragmentBytes, count - 1))),
            ParseError::kOk);
}

TEST(WireFormatMalformed, HeartbeatAndGapRanges) {
  std::array<std::byte, kHeartbeatBytes> out{};
  ASSERT_NE(encode_heartbeat(out, kSender, {.first_sequence = 3, .last_sequence = 9}), 0U);
  std::vector<std::byte> bytes(out.begin(), out.end());
  put_u64(bytes, 32, 11);  // first > last + 1
  EXPECT_EQ(parse_error(bytes), ParseError::kBadSequenceRange);
  put_u64(bytes, 32, 0);
  EXPECT_EQ(parse_error(bytes), ParseError::kZeroSequence);
  bytes.assign(out.begin(), out.end());
  put_u32(bytes, 52, 1);
  EXPECT_EQ(parse_error(bytes), ParseError::kReservedNotZero);
  bytes.push_back(std::byte{0});
  put_u32(bytes, 20, static_cast<std::uint32_t>(bytes.size()));
  put_u32(bytes, 52, 0);
  EXPECT_EQ(parse_error(bytes), ParseError::kLengthMismatch) << "heartbeats have a fixed size";

  ASSERT_NE(encode_gap(out, kSender, {.first_sequence = 3, .end_sequence = 9}), 0U);
  bytes.assign(out.begin(), out.end());
  put_u64(bytes, 40, 3);  // end == first: empty gap
  EXPECT_EQ(parse_error(bytes), ParseError::kBadSequenceRange);
}

TEST(WireFormat, AckRoundTrip) {
  std::array<std::byte, kAckBytes> out{};
  ASSERT_EQ(
      encode_ack(out, kSender, {.target_sender_id = 77, .topic_id = kTopic, .next_sequence = 12, .writer_id = 4}, true),
      kAckBytes);
  auto ack = parse_datagram(out);
  ASSERT_TRUE(ack.ok()) << ack.error().message();
  EXPECT_EQ(ack->header.type, DatagramType::kAck);
  EXPECT_EQ(ack->ack.target_sender_id, 77U);
  EXPECT_EQ(ack->ack.topic_id, kTopic);
  EXPECT_EQ(ack->ack.next_sequence, 12U);
  EXPECT_EQ(ack->ack.writer_id, 4U);
  EXPECT_EQ(encode_ack(out, kSender, {.next_sequence = 0}), 0U) << "sequences start at 1";
}

TEST(WireFormatMalformed, AckFields) {
  std::array<std::byte, kAckBytes> out{};
  ASSERT_NE(encode_ack(out, kSender, {.target_sender_id = 1, .next_sequence = 9}), 0U);
  std::vector<std::byte> bytes(out.begin(), out.end());
  put_u64(bytes, 40, 0);
  EXPECT_EQ(parse_error(bytes), ParseError::kZeroSequence);
  bytes.assign(out.begin(), out.end());
  put_u32(bytes, 52, 1);
  EXPECT_EQ(parse_error(bytes), ParseError::kReservedNotZero);
  bytes.assign(out.begin(), out.end());
  bytes[6] = std::byte{kFlagReliable};
  EXPECT_EQ(parse_error(bytes), ParseError::kUnknownFlags) << "only DATA and HEARTBEAT carry the reliable flag";
  bytes.assign(out.begin(), out.end());
  bytes.push_back(std::byte{0});
  put_u32(bytes, 20, static_cast<std::uint32_t>(bytes.size()));
  EXPECT_EQ(parse_error(bytes), ParseError::kLengthMismatch) << "ACKs have a fixed size";
  bytes.resize(kAckBytes - 1);
  put_u32(bytes, 20, static_cast<std::uint32_t>(bytes.size()));
  EXPECT_EQ(parse_error(bytes), ParseError::kTruncatedBody);
}

TEST(WireFormatMalformed, NackRangesAreBounded) {
  std::array<std::byte, 2048> out{};
  const std::array<NackRange, 1> one{NackRange{.sequence = 4, .first_fragment = 1, .end_fragment = 2}};
  const std::size_t size = encode_nack(out, kSender, 1, kTopic, 1, one);
  ASSERT_NE(size, 0U);
  const std::vector<std::byte> good(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(size));

  auto bytes = good;
  put_u32(bytes, 44, kMaxNackRanges + 1);
  EXPECT_EQ(parse_error(bytes), ParseError::kTooManyNackRanges);
  put_u32(bytes, 44, 0xFFFFFFFF);
  EXPECT_EQ(parse_error(bytes), ParseError::kTooManyNackRanges);
  put_u32(bytes, 44, 0);
  EXPECT_EQ(parse_error(bytes), ParseError::kBadNackRange);
  put_u32(bytes, 44, 2);  // says 2, carries 1
  EXPECT_EQ(parse_error(bytes), ParseError::kLengthMismatch);
  bytes = good;
  put_u32(bytes, kNackHeaderBytes + 8, 2);  // first == end
  EXPECT_EQ(parse_error(bytes), ParseError::kBadNackRange);
  bytes = good;
  put_u64(bytes, kNackHeaderBytes, 0);
  EXPECT_EQ(parse_error(bytes), ParseError::kZeroSequence);
}

// ---- ANNOUNCE's RDMA reachability (wire version 3, bytes 76..79).

Announce valid_announce_fields(RdmaReachability rdma) {
  Announce a;
  a.domain_id = 3;
  a.ipv4 = 0x0A000001U;
  a.port = 7400;
  a.period_ms = 100;
  std::memcpy(a.host.data(), "alpha", 5);
  a.rdma = rdma;
  return a;
}

std::vector<std::byte> encode_announce_of(RdmaReachability rdma, bool checksum = false) {
  const std::array<AnnounceEntry, 1> entries{AnnounceEntry{
      .topic_id = kTopic, .type_hash = 5, .type_name_hash = 6, .flags = kEntryReceiver, .subscribers = 1}};
  std::vector<std::byte> out(kAnnounceHeaderBytes + kAnnounceEntryBytes);
  const std::size_t size = encode_announce(out, kSender, valid_announce_fields(rdma), entries, 0, checksum);
  out.resize(size);
  return out;
}

TEST(WireFormatAnnounce, CarriesTheRdmaPortLittleEndianAndTheReachableFlagAtOffset76) {
  const auto bytes = encode_announce_of({.cm_port = 0x1B2F, .reachable = true});
  ASSERT_EQ(bytes.size(), kAnnounceHeaderBytes + kAnnounceEntryBytes);
  EXPECT_EQ(bytes[4], std::byte{3}) << "wire version 3 brought the field";
  EXPECT_EQ(bytes[76], std::byte{0x2F});  // rdma_cm port, low byte first
  EXPECT_EQ(bytes[77], std::byte{0x1B});
  EXPECT_EQ(bytes[78], std::byte{0x01});  // flags: bit 0 reachable
  EXPECT_EQ(bytes[79], std::byte{0x00});  // reserved
}

TEST(WireFormatAnnounce, NotReachableIsFourZeroBytes) {
  const auto bytes = encode_announce_of({});
  ASSERT_EQ(bytes.size(), kAnnounceHeaderBytes + kAnnounceEntryBytes);
  for (std::size_t at = 76; at < 80; ++at) {
    EXPECT_EQ(bytes[at], std::byte{0}) << "offset " << at;
  }
  auto sut = parse_datagram(bytes);
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_FALSE(sut->announce.rdma.reachable);
  EXPECT_EQ(sut->announce.rdma.cm_port, 0U);
}

TEST(WireFormatAnnounce, RoundTripsEveryFieldWithTheRdmaReachability) {
  for (const bool checksum : {false, true}) {
    const auto bytes = encode_announce_of({.cm_port = 7471, .reachable = true}, checksum);
    ParsedDatagram parsed;
    ASSERT_EQ(parse_error(bytes), ParseError::kOk);
    ASSERT_EQ(parse_datagram(bytes, {}, parsed), ParseError::kOk);
    const Announce& got = parsed.announce;
    EXPECT_EQ(got.rdma, (RdmaReachability{.cm_port = 7471, .reachable = true}));
    EXPECT_EQ(got.domain_id, 3U);
    EXPECT_EQ(got.ipv4, 0x0A000001U);
    EXPECT_EQ(got.port, 7400U);
    EXPECT_EQ(got.host_name(), "alpha");
    ASSERT_EQ(got.entry_count, 1U);
    EXPECT_EQ(got.entry(0).topic_id, kTopic);

    std::array<AnnounceEntry, 1> entries{got.entry(0)};
    std::vector<std::byte> again(bytes.size());
    ASSERT_EQ(encode_announce(again, kSender, got, entries, 0, checksum), bytes.size());
    EXPECT_EQ(again, bytes) << "re-encoding the parsed fields gives the same bytes";
  }
}

TEST(WireFormatAnnounce, RefusesUnknownRdmaFlagsAReservedByteAndAPortThatDisagreesWithTheFlag) {
  const auto reachable = encode_announce_of({.cm_port = 7471, .reachable = true});
  const auto unreachable = encode_announce_of({});
  struct Case {
    const char* what;
    const std::vector<std::byte>& from;
    std::size_t offset;
    std::byte value;
    ParseError expected;
  };
  for (const Case& c : {
           Case{"unknown flag bit 1", reachable, 78, std::byte{0x03}, ParseError::kBadAnnounce},
           Case{"unknown flag bit 7", unreachable, 78, std::byte{0x80}, ParseError::kBadAnnounce},
           Case{"reserved byte", reachable, 79, std::byte{0x01}, ParseError::kReservedNotZero},
           Case{"reserved byte, not reachable", unreachable, 79, std::byte{0x80}, ParseError::kReservedNotZero},
           Case{"reachable without a port", unreachable, 78, std::byte{0x01}, ParseError::kBadAnnounce},
           Case{"a port without reachable", reachable, 78, std::byte{0x00}, ParseError::kBadAnnounce},
           Case{"a port (high byte) without reachable", unreachable, 77, std::byte{0x01}, ParseError::kBadAnnounce},
       }) {
    auto bytes = c.from;
    bytes[c.offset] = c.value;
    EXPECT_EQ(parse_error(bytes), c.expected) << c.what;
  }
  auto bytes = reachable;
  bytes[76] = std::byte{0};
  bytes[77] = std::byte{0};
  EXPECT_EQ(parse_error(bytes), ParseError::kBadAnnounce) << "reachable at port 0";
}

TEST(WireFormatAnnounce, EncoderRefusesAReachabilityTheParserWouldRefuse) {
  EXPECT_TRUE(encode_announce_of({.cm_port = 0, .reachable = true}).empty()) << "reachable without a port";
  EXPECT_TRUE(encode_announce_of({.cm_port = 7471, .reachable = false}).empty()) << "a port without reachable";
  EXPECT_FALSE(encode_announce_of({.cm_port = 65535, .reachable = true}).empty());
}

TEST(WireFormatMalformed, EveryReasonHasADistinctMessage) {
  for (std::size_t i = 0; i < kParseErrorCount; ++i) {
    for (std::size_t j = i + 1; j < kParseErrorCount; ++j) {
      EXPECT_NE(to_string(static_cast<ParseError>(i)), to_string(static_cast<ParseError>(j)));
    }
  }
}

TEST(ParseCounters, CountsByReason) {
  ParseCounters sut;
  sut.count(ParseError::kBadMagic);
  sut.count(ParseError::kBadMagic);
  sut.count(ParseError::kOk);
  sut.count(ParseError::kBadChecksum);
  EXPECT_EQ(sut.of(ParseError::kBadMagic), 2U);
  EXPECT_EQ(sut.of(ParseError::kOk), 1U);
  EXPECT_EQ(sut.refused(), 3U);
}

}  // namespace
}  // namespace axon::udp
