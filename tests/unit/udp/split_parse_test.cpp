// parse_split_datagram(), the parser of datagrams a scatter receive left in two
// pieces, agrees with parse_datagram() on valid datagrams of every type and on
// every single-byte corruption of them. (Every malformed case of
// wire_format_test.cpp goes through both parsers too.)
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/unit/udp/parse_both.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp {
namespace {

constexpr std::uint64_t kSender = 0x0102030405060708ULL;
constexpr std::uint64_t kTopic = 0xB1B2B3B4B5B6B7B8ULL;

std::vector<std::byte> message_of(std::size_t size) {
  std::vector<std::byte> message(size);
  for (std::size_t i = 0; i < size; ++i) {
    message[i] = static_cast<std::byte>((i * 37 + 11) & 0xFF);
  }
  return message;
}

std::vector<std::byte> first(const std::array<std::byte, kMaxDatagramBytes>& out, std::size_t size) {
  EXPECT_NE(size, 0U) << "the encoder refused the test's datagram";
  return {out.begin(), out.begin() + static_cast<std::ptrdiff_t>(size)};
}

struct Named {
  std::string name;
  std::vector<std::byte> bytes;
};

// Valid datagrams of every type, with and without checksum; the NACK and
// ANNOUNCE lists are long enough to straddle the two pieces.
std::vector<Named> valid_datagrams() {
  static std::array<std::byte, kMaxDatagramBytes> out{};
  std::vector<Named> all;
  const auto message = message_of(2500);
  const std::vector<std::byte> empty;
  for (const bool checksum : {false, true}) {
    const std::string suffix = checksum ? " +crc" : "";
    for (std::uint32_t index = 0; index < 3; ++index) {
      all.push_back({"data " + std::to_string(index) + suffix,
                     first(out, encode_data(out, kSender, make_fragment(kTopic, 9, 42, message, 1000, index), checksum,
                                            index == 1))});
    }
    all.push_back({"empty data" + suffix,
                   first(out, encode_data(out, kSender, make_fragment(kTopic, 9, 1, empty, 1000, 0), checksum))});
    all.push_back(
        {"heartbeat" + suffix,
         first(out, encode_heartbeat(out, kSender,
                                     {.topic_id = kTopic, .first_sequence = 3, .last_sequence = 9, .writer_id = 4},
                                     checksum, true))});
    all.push_back({"gap" + suffix,
                   first(out, encode_gap(out, kSender,
                                         {.topic_id = kTopic, .first_sequence = 3, .end_sequence = 5, .writer_id = 4},
                                         checksum))});
    all.push_back(
        {"ack" + suffix,
         first(out, encode_ack(out, kSender,
                               {.target_sender_id = 77, .topic_id = kTopic, .next_sequence = 6, .writer_id = 4},
                               checksum))});
    for (const std::size_t ranges : {std::size_t{1}, std::size_t{2}, kMaxNackRanges}) {
      std::vector<NackRange> list;
      for (std::size_t i = 0; i < ranges; ++i) {
        list.push_back({.sequence = 10 + i, .first_fragment = static_cast<std::uint32_t>(i), .end_fragment = 100});
      }
      all.push_back({"nack x" + std::to_string(ranges) + suffix,
                     first(out, encode_nack(out, kSender, 77, kTopic, 4, list, checksum))});
    }
    Announce announce;
    announce.domain_id = 3;
    announce.ipv4 = 0x0A000001U;
    announce.port = 7400;
    announce.period_ms = 100;
    std::memcpy(announce.host.data(), "alpha", 5);
    for (const std::size_t entries : {std::size_t{0}, std::size_t{1}, kMaxAnnounceEntries}) {
      std::vector<AnnounceEntry> list;
      for (std::size_t i = 0; i < entries; ++i) {
        list.push_back({.topic_id = i + 1,
                        .type_hash = i * 3,
                        .type_name_hash = i * 5,
                        .flags = kEntryReliable,
                        .subscribers = 2});
      }
      all.push_back({"announce x" + std::to_string(entries) + suffix,
                     first(out, encode_announce(out, kSender, announce, list, kFlagRelayed, checksum))});
    }
    announce.rdma = RdmaReachability{.cm_port = 7471, .reachable = true};  // bytes 76..79: in the second piece
    all.push_back({"announce rdma" + suffix, first(out, encode_announce(out, kSender, announce, {}, 0, checksum))});
  }
  return all;
}

TEST(SplitParse, AgreesWithTheWholeParserOnValidDatagramsOfEveryType) {
  for (const Named& d : valid_datagrams()) {
    SCOPED_TRACE(d.name);
    ParsedDatagram sut;
    EXPECT_EQ(test::parse_both(d.bytes, {}, sut), ParseError::kOk);
  }
}

TEST(SplitParse, AgreesWithTheWholeParserOnEverySingleByteCorruption) {
  std::size_t refused = 0;
  for (const Named& d : valid_datagrams()) {
    SCOPED_TRACE(d.name);
    for (std::size_t at = 0; at < d.bytes.size(); ++at) {
      for (const std::byte flip : {std::byte{0x01}, std::byte{0x80}}) {
        auto bytes = d.bytes;
        bytes[at] ^= flip;
        ParsedDatagram sut;
        refused += test::parse_both(bytes, {}, sut) != ParseError::kOk ? 1 : 0;
      }
    }
  }
  EXPECT_GT(refused, 0U);
}

TEST(SplitParse, ChecksumCoversBothPieces) {
  const auto message = message_of(2500);
  std::array<std::byte, kMaxDatagramBytes> out{};
  const std::size_t size = encode_data(out, kSender, make_fragment(kTopic, 9, 42, message, 1000, 1), true);
  ASSERT_EQ(size, kDataHeaderBytes + 1000);
  std::vector<std::byte> payload(out.begin() + kDataHeaderBytes, out.begin() + static_cast<std::ptrdiff_t>(size));
  ParsedDatagram sut;
  ASSERT_EQ(parse_split_datagram(std::span(out).first(kDataHeaderBytes), payload, {.require_checksum = true}, sut),
            ParseError::kOk);
  EXPECT_EQ(sut.data.payload.data(), payload.data());

  payload[999] ^= std::byte{0x10};

  EXPECT_EQ(parse_split_datagram(std::span(out).first(kDataHeaderBytes), payload, {}, sut), ParseError::kBadChecksum);
}

TEST(SplitParse, TruncatedAndExtendedDatagramsAreRefusedAlike) {
  for (const Named& d : valid_datagrams()) {
    SCOPED_TRACE(d.name);
    for (std::size_t size = 0; size < d.bytes.size(); ++size) {
      const std::vector<std::byte> cut(d.bytes.begin(), d.bytes.begin() + static_cast<std::ptrdiff_t>(size));
      ParsedDatagram sut;
      EXPECT_NE(test::parse_both(cut, {}, sut), ParseError::kOk) << "size " << size;
    }
    auto longer = d.bytes;
    longer.push_back(std::byte{0});
    ParsedDatagram sut;
    EXPECT_NE(test::parse_both(longer, {}, sut), ParseError::kOk);
  }
}

}  // namespace
}  // namespace axon::udp
