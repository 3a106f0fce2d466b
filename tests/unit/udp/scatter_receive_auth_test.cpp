// ScatterReceive with authenticated and with encrypted datagrams, without a
// socket: fragments behind an envelope still land in their chunk (encrypted
// ones decrypted there); a forged fragment written under a prediction is
// refused before the reassembler marks it, and the real one fills its place
// later; an encrypting receiver refuses an authenticated-only fragment there.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "tests/unit/udp/test_provider.hpp"
#include "transports/udp/datagram_guard.hpp"
#include "transports/udp/scatter_receive.hpp"

namespace axon::udp {
namespace {

using test::message_of;
using test::TestProvider;
using Kind = Arrival::Kind;

constexpr std::uint64_t kSender = 0xCAFEULL;
constexpr std::uint64_t kTopic = 0x7070ULL;
constexpr std::uint32_t kFragmentBytes = 1000;
constexpr std::size_t kDatagramBytes = 1536;

DatagramKey key_of(std::uint8_t fill) {
  std::array<std::byte, kKeyBytes> bytes{};
  bytes.fill(std::byte{fill});
  return *make_datagram_key(bytes);
}

class ScatterReceiveAuthTest : public ::testing::TestWithParam<Protection> {
 protected:
  void SetUp() override {
    auto created = Reassembler::create({.max_messages_in_flight = 2, .max_messages_per_sender = 1}, provider);
    ASSERT_TRUE(created.ok());
    reassembler.emplace(std::move(*created));
    auto opener = EnvelopeOpener::create(key, nullptr, EnvelopeOpener::kMaxSessions, GetParam());
    ASSERT_TRUE(opener.ok());
    guard.emplace(std::move(*opener), AllowList{}, counters);
  }

  /// Fragment `index` of `message` behind an envelope sealed by `sealer` (after it, its ciphertext when the sealer
  /// encrypts).
  static std::vector<std::byte> sealed_fragment(const EnvelopeSealer& sealer, const std::vector<std::byte>& message,
                                                std::uint32_t index) {
    std::vector<std::byte> datagram(kMaxDatagramBytes);
    datagram.resize(encode_data(datagram, kSender, make_fragment(kTopic, 1, 1, message, kFragmentBytes, index)));
    EnvelopeBytes envelope{};
    std::vector<std::byte> ciphertext(sealer.encrypts() ? datagram.size() : 0);
    EXPECT_TRUE(sealer.seal(envelope, datagram, {}, ciphertext));
    if (sealer.encrypts()) {
      datagram = ciphertext;
    }
    datagram.insert(datagram.begin(), envelope.begin(), envelope.end());
    return datagram;
  }

  /// Receives `datagrams` as one batch and handles them in order, as the participant does.
  std::vector<Kind> receive(const std::vector<std::vector<std::byte>>& datagrams) {
    const std::span<IncomingDatagram> batch = sut.prepare(&*reassembler);
    for (std::size_t i = 0; i < datagrams.size(); ++i) {
      std::size_t at = 0;
      for (const std::span<std::byte> piece : batch[i].pieces) {
        const std::size_t n = std::min(piece.size(), datagrams[i].size() - at);
        if (n > 0) {
          std::memcpy(piece.data(), datagrams[i].data() + at, n);
        }
        at += n;
      }
      batch[i].size = datagrams[i].size();
    }
    sut.settle(datagrams.size(), {}, &*guard);
    std::vector<Kind> kinds;
    for (std::size_t i = 0; i < datagrams.size(); ++i) {
      const Arrival arrival = sut.arrival(i, *reassembler);
      kinds.push_back(arrival.kind);
      ParsedDatagram parsed;
      if (arrival.kind == Kind::kContiguous && parse_datagram(arrival.bytes, {}, parsed) == ParseError::kOk) {
        feed(parsed);
      } else if (arrival.kind == Kind::kInPlace) {
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

  DatagramKey key = key_of(1);
  EnvelopeSealer sealer{key, GetParam()};
  EnvelopeSealer stranger{key_of(2), GetParam()};
  NetworkCounterCells counters;
  std::optional<DatagramGuard> guard;
  TestProvider provider;
  std::optional<Reassembler> reassembler;
  ScatterReceive sut{8, kDatagramBytes, kEnvelopeBytes};
  std::vector<std::vector<std::byte>> completed;
};

TEST_P(ScatterReceiveAuthTest, AForgedFragmentUnderAPredictionIsRefusedAndTheRealOneFillsItsPlace) {
  const auto message = message_of(std::size_t{6} * kFragmentBytes - 100);  // 6 fragments
  EXPECT_EQ(receive({sealed_fragment(sealer, message, 0)}), std::vector<Kind>{Kind::kContiguous});

  // Fragment 3 comes forged (another key, other bytes) where the receiver predicts it.
  auto forged_message = message;
  std::fill(forged_message.begin(), forged_message.end(), std::byte{0x66});
  EXPECT_EQ(receive({sealed_fragment(sealer, message, 1), sealed_fragment(sealer, message, 2),
                     sealed_fragment(stranger, forged_message, 3), sealed_fragment(sealer, message, 4)}),
            (std::vector<Kind>{Kind::kInPlace, Kind::kInPlace, Kind::kRefused, Kind::kInPlace}));
  EXPECT_EQ(counters.auth_failures.load(), 1U);
  std::array<FragmentRange, 4> missing{};
  ASSERT_EQ(reassembler->missing_fragments(MessageKey{.sender_id = kSender, .sequence = 1, .writer_id = 1}, missing),
            2U);
  EXPECT_EQ(missing[0].first, 3U);  // the forged fragment was never marked received
  EXPECT_EQ(missing[0].end, 4U);

  const std::vector<Kind> last = receive({sealed_fragment(sealer, message, 3), sealed_fragment(sealer, message, 5)});
  EXPECT_EQ(std::count(last.begin(), last.end(), Kind::kRefused), 0);
  ASSERT_EQ(completed.size(), 1U);
  EXPECT_EQ(completed[0], message);  // the forged bytes in fragment 3's place were overwritten
  EXPECT_EQ(counters.auth_failures.load(), 1U);
}

TEST_P(ScatterReceiveAuthTest, ADatagramWithoutAnEnvelopeIsRefusedAsUnauthenticated) {
  const auto message = message_of(500);
  std::vector<std::byte> plain(kMaxDatagramBytes);
  plain.resize(encode_data(plain, kSender, make_fragment(kTopic, 1, 1, message, kFragmentBytes, 0)));

  EXPECT_EQ(receive({plain}), std::vector<Kind>{Kind::kRefused});
  EXPECT_EQ(counters.unauthenticated.load(), 1U);
  EXPECT_TRUE(completed.empty());
}

TEST_P(ScatterReceiveAuthTest, FragmentsLandInTheirChunkInClear) {
  const auto message = message_of(std::size_t{5} * kFragmentBytes - 10);
  EXPECT_EQ(receive({sealed_fragment(sealer, message, 0)}), std::vector<Kind>{Kind::kContiguous});

  EXPECT_EQ(receive({sealed_fragment(sealer, message, 1), sealed_fragment(sealer, message, 2),
                     sealed_fragment(sealer, message, 3), sealed_fragment(sealer, message, 4)}),
            (std::vector<Kind>{Kind::kInPlace, Kind::kInPlace, Kind::kInPlace, Kind::kInPlace}));
  ASSERT_EQ(completed.size(), 1U);
  EXPECT_EQ(completed[0], message);
  EXPECT_EQ(reassembler->counters().fragments_in_place, 4U);
}

TEST_P(ScatterReceiveAuthTest, FragmentsOfTheOtherProtectionAreRefusedUnderAPredictionAndCounted) {
  const Protection other = GetParam() == Protection::kEncrypted ? Protection::kAuthenticated : Protection::kEncrypted;
  const EnvelopeSealer mismatched(key, other);  // the right key, the other `encrypt` setting
  const auto message = message_of(std::size_t{4} * kFragmentBytes - 10);
  EXPECT_EQ(receive({sealed_fragment(sealer, message, 0)}), std::vector<Kind>{Kind::kContiguous});

  EXPECT_EQ(receive({sealed_fragment(sealer, message, 1), sealed_fragment(mismatched, message, 2)}),
            (std::vector<Kind>{Kind::kInPlace, Kind::kRefused}));
  EXPECT_EQ(
      GetParam() == Protection::kEncrypted ? counters.not_encrypted.load() : counters.unexpectedly_encrypted.load(),
      1U);
  EXPECT_EQ(counters.auth_failures.load(), 0U);
  const auto mismatch = guard->take_mismatch();
  ASSERT_TRUE(mismatch);
  EXPECT_EQ(mismatch->outcome,
            GetParam() == Protection::kEncrypted ? OpenOutcome::kNotEncrypted : OpenOutcome::kUnexpectedlyEncrypted);
  EXPECT_FALSE(guard->take_mismatch()) << "said once";

  EXPECT_EQ(receive({sealed_fragment(sealer, message, 2), sealed_fragment(sealer, message, 3)}),
            (std::vector<Kind>{Kind::kInPlace, Kind::kInPlace}));
  ASSERT_EQ(completed.size(), 1U);
  EXPECT_EQ(completed[0], message);
  EXPECT_FALSE(guard->take_mismatch());
}

INSTANTIATE_TEST_SUITE_P(BothProtections, ScatterReceiveAuthTest,
                         ::testing::Values(Protection::kAuthenticated, Protection::kEncrypted),
                         [](const ::testing::TestParamInfo<Protection>& info) {
                           return info.param == Protection::kEncrypted ? std::string("Encrypted")
                                                                       : std::string("Authenticated");
                         });

}  // namespace
}  // namespace axon::udp
