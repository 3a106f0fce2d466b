// ScatterReceive without a socket: each test plays the kernel's part (a
// datagram fills the pieces of its slot in order) and handles the batch as
// the participant does, feeding DATA to a Reassembler whose provider frees
// a destination when it gets it back (so ASan sees any read of it after).
#include "transports/udp/scatter_receive.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "tests/unit/udp/test_provider.hpp"

namespace axon::udp {
namespace {

using test::message_of;
using test::TestProvider;

constexpr std::uint64_t kSender = 0xCAFEULL;
constexpr std::uint64_t kTopic = 0x7070ULL;
constexpr std::uint32_t kFragmentBytes = 1000;
constexpr std::size_t kDatagramBytes = 1536;  // what the participant uses for a 1500-byte MTU
constexpr Endpoint kFrom{.ipv4 = 0x7F000001U, .port = 4000};

// What recvmmsg does with one datagram: its bytes fill the pieces in order; a
// longer one is cut and reports its real size (MSG_TRUNC).
void deliver(IncomingDatagram& d, std::span<const std::byte> bytes) {
  std::size_t at = 0;
  for (const std::span<std::byte> piece : d.pieces) {
    const std::size_t n = std::min(piece.size(), bytes.size() - at);
    if (n > 0) {  // an unused piece has no data pointer
      std::memcpy(piece.data(), bytes.data() + at, n);
    }
    at += n;
  }
  d.size = bytes.size();
  d.from = kFrom;
}

std::vector<std::byte> data_datagram(const std::vector<std::byte>& message, std::uint64_t sequence, std::uint32_t index,
                                     std::uint32_t fragment_bytes = kFragmentBytes) {
  std::vector<std::byte> out(kMaxDatagramBytes);
  out.resize(encode_data(out, kSender, make_fragment(kTopic, 1, sequence, message, fragment_bytes, index), true));
  return out;
}

class ScatterReceiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = Reassembler::create({.max_messages_in_flight = 2, .max_messages_per_sender = 1}, provider);
    ASSERT_TRUE(created.ok());
    reassembler.emplace(std::move(*created));
  }

  // Receives `datagrams` as one batch and handles them in order, as the
  // participant does. Returns the kinds seen.
  std::vector<Arrival::Kind> receive(const std::vector<std::vector<std::byte>>& datagrams) {
    const std::span<IncomingDatagram> batch = sut.prepare(&*reassembler);
    for (std::size_t i = 0; i < datagrams.size(); ++i) {
      deliver(batch[i], datagrams[i]);
    }
    sut.settle(datagrams.size(), {});
    std::vector<Arrival::Kind> kinds;
    for (std::size_t i = 0; i < datagrams.size(); ++i) {
      const Arrival arrival = sut.arrival(i, *reassembler);
      kinds.push_back(arrival.kind);
      if (arrival.kind == Arrival::Kind::kContiguous) {
        contiguous.emplace_back(arrival.bytes.begin(), arrival.bytes.end());
        ParsedDatagram parsed;
        if (parse_datagram(arrival.bytes, {}, parsed) == ParseError::kOk && parsed.header.type == DatagramType::kData) {
          feed(parsed);
        }
      } else if (arrival.kind == Arrival::Kind::kInPlace) {
        EXPECT_EQ(arrival.from, kFrom);
        feed(*arrival.parsed);
      }
    }
    return kinds;
  }

  void feed(const ParsedDatagram& parsed) {
    const FeedResult r = reassembler->on_fragment(parsed.header.sender_id, parsed.data, 0);
    if (r.outcome == FeedOutcome::kCompleted) {
      completed.push_back(provider.take(r.message));
    }
  }

  void feed_copy(const std::vector<std::byte>& message, std::uint64_t sequence, std::uint32_t index) {
    const auto bytes = data_datagram(message, sequence, index);
    ParsedDatagram parsed;
    ASSERT_EQ(parse_datagram(bytes, {}, parsed), ParseError::kOk);
    feed(parsed);
  }

  TestProvider provider;
  std::optional<Reassembler> reassembler;
  ScatterReceive sut{8, kDatagramBytes};
  std::vector<std::vector<std::byte>> contiguous;
  std::vector<std::vector<std::byte>> completed;
};

using Kind = Arrival::Kind;

TEST_F(ScatterReceiveTest, PredictedFragmentsAreReadStraightIntoTheirChunk) {
  const auto message = message_of(std::size_t{20} * kFragmentBytes - 300);  // 20 fragments
  feed_copy(message, 1, 0);
  std::vector<std::vector<std::byte>> first;
  for (std::uint32_t i = 1; i <= 8; ++i) {
    first.push_back(data_datagram(message, 1, i));
  }

  EXPECT_EQ(receive(first), std::vector<Kind>(8, Kind::kInPlace));
  EXPECT_EQ(sut.predicted(), 8U);

  std::vector<std::vector<std::byte>> partial;  // a batch the socket had only 5 datagrams for
  for (std::uint32_t i = 9; i <= 13; ++i) {
    partial.push_back(data_datagram(message, 1, i));
  }
  EXPECT_EQ(receive(partial), std::vector<Kind>(5, Kind::kInPlace));
  std::vector<std::vector<std::byte>> rest;
  for (std::uint32_t i = 14; i < 20; ++i) {
    rest.push_back(data_datagram(message, 1, i));
  }
  EXPECT_EQ(receive(rest), std::vector<Kind>(6, Kind::kInPlace));

  ASSERT_EQ(completed.size(), 1U);
  EXPECT_EQ(completed[0], message);
  EXPECT_EQ(reassembler->counters().fragments_in_place, 19U);
  EXPECT_EQ(reassembler->counters().fragments_copied, 1U);
}

TEST_F(ScatterReceiveTest, OtherDatagramsArePutBackTogetherInTheirBuffers) {
  const auto message = message_of(std::size_t{20} * kFragmentBytes);
  feed_copy(message, 1, 0);
  std::array<std::byte, 2048> out{};
  std::array<NackRange, 10> ranges{};
  ranges.fill(NackRange{.sequence = 3, .first_fragment = 0, .end_fragment = 5});
  const std::vector<std::byte> nack(
      out.begin(), out.begin() + static_cast<std::ptrdiff_t>(encode_nack(out, kSender, 9, kTopic, 1, ranges, true)));
  const std::vector<std::byte> heartbeat(
      out.begin(), out.begin() + static_cast<std::ptrdiff_t>(encode_heartbeat(
                                     out, kSender, {.topic_id = kTopic, .first_sequence = 1, .last_sequence = 1})));
  const auto other = message_of(5000, 9);
  const std::vector<std::vector<std::byte>> batch{
      nack,                                           // longer than the header: its ranges went into the chunk
      heartbeat,                                      // all of it in the header's buffer
      data_datagram(other, 1, 0, 1400),               // longer than the predicted fragment: header, chunk and tail
      data_datagram(message, 1, 5),                   // the right length, the wrong index
      std::vector<std::byte>(1064, std::byte{0x5A}),  // the right length, garbage
  };

  EXPECT_EQ(receive(batch), std::vector<Kind>(5, Kind::kContiguous));

  EXPECT_EQ(contiguous, batch) << "each one whole again, in its own buffer";
  std::array<FragmentRange, 4> missing{};
  EXPECT_EQ(reassembler->missing_fragments({.sender_id = kSender, .sequence = 1, .writer_id = 1}, missing), 2U)
      << "fragment 5 was stored (copied); 1-4 and 6-19 are missing";
}

TEST_F(ScatterReceiveTest, SwappedFragmentsAreBothPutBackBeforeEitherIsHandled) {
  const auto message = message_of(std::size_t{4} * kFragmentBytes);
  feed_copy(message, 1, 0);
  // Fragment 2 lands where 1 was predicted and 1 where 2 was: handling the
  // first copies fragment 2 over the place that held the second's payload.
  const std::vector<std::vector<std::byte>> batch{data_datagram(message, 1, 2), data_datagram(message, 1, 1),
                                                  data_datagram(message, 1, 3)};

  EXPECT_EQ(receive(batch), (std::vector<Kind>{Kind::kContiguous, Kind::kContiguous, Kind::kInPlace}));

  ASSERT_EQ(completed.size(), 1U);
  EXPECT_EQ(completed[0], message);
  EXPECT_EQ(reassembler->counters().fragments_copied, 3U);
  EXPECT_EQ(reassembler->counters().fragments_in_place, 1U);
}

TEST_F(ScatterReceiveTest, AFragmentWhoseMessageGaveUpItsChunkIsDroppedUnread) {
  const auto message = message_of(std::size_t{10} * kFragmentBytes);
  feed_copy(message, 1, 0);
  // The sender's next message evicts message 1 (one message per sender), so
  // its chunk goes back to the provider (freed) before fragment 2 is handled.
  const std::vector<std::vector<std::byte>> batch{data_datagram(message, 2, 0), data_datagram(message, 1, 2)};

  EXPECT_EQ(receive(batch), (std::vector<Kind>{Kind::kContiguous, Kind::kStale}));

  EXPECT_EQ(reassembler->counters().messages_evicted, 1U);
  EXPECT_EQ(reassembler->counters().fragments_in_place, 0U);
}

TEST_F(ScatterReceiveTest, AFragmentReceivedEarlierInTheBatchMakesItsPredictionStale) {
  const auto message = message_of(std::size_t{10} * kFragmentBytes);
  feed_copy(message, 1, 0);
  const std::vector<std::vector<std::byte>> batch{data_datagram(message, 1, 2), data_datagram(message, 1, 2)};

  EXPECT_EQ(receive(batch), (std::vector<Kind>{Kind::kContiguous, Kind::kStale}));

  EXPECT_EQ(reassembler->counters().fragments_stored, 2U);
}

TEST_F(ScatterReceiveTest, ADatagramLongerThanItsBufferIsTooLong) {
  const auto message = message_of(std::size_t{10} * kFragmentBytes);
  feed_copy(message, 1, 0);
  const std::vector<std::vector<std::byte>> batch{std::vector<std::byte>(kDatagramBytes + 1),
                                                  std::vector<std::byte>(kDatagramBytes)};

  EXPECT_EQ(receive(batch), (std::vector<Kind>{Kind::kTooLong, Kind::kContiguous}));
}

TEST_F(ScatterReceiveTest, PredictsNothingWithoutAReassemblerOrWhenAFragmentDoesNotFit) {
  std::span<IncomingDatagram> batch = sut.prepare(nullptr);
  EXPECT_EQ(sut.predicted(), 0U);
  ASSERT_EQ(batch.size(), 8U);
  EXPECT_EQ(batch[0].capacity(), kDatagramBytes);

  const auto message = message_of(std::size_t{10} * kFragmentBytes);
  feed_copy(message, 1, 0);
  ScatterReceive small(4, kDataHeaderBytes + kFragmentBytes - 1);
  batch = small.prepare(&*reassembler);
  EXPECT_EQ(small.predicted(), 0U);
  EXPECT_EQ(batch[0].pieces[1].size(), 0U);

  batch = sut.prepare(&*reassembler);
  EXPECT_EQ(sut.predicted(), 8U);
  EXPECT_EQ(batch[0].capacity(), kDatagramBytes) << "header + place + tail: as much room as without a prediction";
}

}  // namespace
}  // namespace axon::udp
