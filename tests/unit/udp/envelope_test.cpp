// The envelope of authenticated datagrams: sealing and opening (in one piece
// and split as a scatter receive splits it), every byte's tampering refused,
// another key refused, two keys accepted during a rotation.
#include "transports/udp/envelope.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace axon::udp {
namespace {

DatagramKey key_of(std::uint8_t fill) {
  std::array<std::byte, kKeyBytes> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::byte>(fill + i);
  }
  return *make_datagram_key(bytes);
}

std::vector<std::byte> bytes_of(std::size_t size, std::uint8_t seed) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<std::byte>(seed + 7 * i);
  }
  return bytes;
}

/// A sealed datagram: envelope, header, payload in one buffer.
std::vector<std::byte> sealed(const EnvelopeSealer& sealer, std::uint64_t session, std::uint64_t counter,
                              std::span<const std::byte> header, std::span<const std::byte> payload) {
  EnvelopeBytes envelope{};
  EXPECT_TRUE(sealer.seal_as(envelope, session, counter, header, payload));
  std::vector<std::byte> datagram(kEnvelopeBytes + header.size() + payload.size());
  std::copy(envelope.begin(), envelope.end(), datagram.begin());
  std::copy(header.begin(), header.end(), datagram.begin() + kEnvelopeBytes);
  if (!payload.empty()) {
    std::copy(payload.begin(), payload.end(),
              datagram.begin() + static_cast<std::ptrdiff_t>(kEnvelopeBytes + header.size()));
  }
  return datagram;
}

DatagramPieces whole(std::span<std::byte> datagram) {
  return DatagramPieces{.pieces = {datagram, {}, {}}, .size = datagram.size()};
}

/// Opens a copy of `datagram` (open() may decrypt in place).
OpenOutcome open_copy(EnvelopeOpener& opener, std::vector<std::byte> datagram) { return opener.open(whole(datagram)); }

std::unique_ptr<EnvelopeOpener> opener_of(const DatagramKey& current, const DatagramKey* previous = nullptr) {
  auto opener = EnvelopeOpener::create(current, previous);
  EXPECT_TRUE(opener.ok());
  return std::move(*opener);
}

TEST(Envelope, OpensWhatItSealedAndRefusesItTheSecondTime) {
  const DatagramKey key = key_of(1);
  const EnvelopeSealer sealer(key);
  const auto header = bytes_of(64, 3);
  const auto payload = bytes_of(1408, 9);
  const auto datagram = sealed(sealer, 0x1234, 1, header, payload);
  const auto sut = opener_of(key);

  EXPECT_EQ(open_copy(*sut, datagram), OpenOutcome::kOk);
  EXPECT_EQ(open_copy(*sut, datagram), OpenOutcome::kReplay);
}

TEST(Envelope, OpensADatagramSplitInThreePiecesAsAScatterReceiveLeavesIt) {
  const DatagramKey key = key_of(1);
  const EnvelopeSealer sealer(key);
  const auto header = bytes_of(64, 3);
  const auto payload = bytes_of(1000, 5);
  auto datagram = sealed(sealer, 77, 5, header, payload);
  const auto sut = opener_of(key);
  // Envelope + header in one piece, the payload in another, a tail buffer left over.
  std::vector<std::byte> tail(500);
  const DatagramPieces split{.pieces = {std::span(datagram).first(kEnvelopeBytes + 64),
                                        std::span(datagram).subspan(kEnvelopeBytes + 64), tail},
                             .size = datagram.size()};

  EXPECT_EQ(sut->open(split), OpenOutcome::kOk);
}

TEST(Envelope, RefusesEveryDatagramWithOneByteChanged) {
  const DatagramKey key = key_of(1);
  const EnvelopeSealer sealer(key);
  const auto header = bytes_of(56, 3);
  const auto payload = bytes_of(100, 4);
  const auto original = sealed(sealer, 0xABCDEF, 9, header, payload);

  for (std::size_t i = 0; i < original.size(); ++i) {
    auto tampered = original;
    tampered[i] ^= std::byte{0x01};
    const auto sut = opener_of(key);  // a fresh window: only the tag (or the framing) can refuse it
    const OpenOutcome outcome = open_copy(*sut, tampered);
    EXPECT_NE(outcome, OpenOutcome::kOk) << "byte " << i;
    if (i >= 8) {  // past magic, version, key id and reserved: the tag catches it
      EXPECT_EQ(outcome, OpenOutcome::kAuthFailure) << "byte " << i;
    }
  }
  const auto sut = opener_of(key);
  EXPECT_EQ(open_copy(*sut, original), OpenOutcome::kOk);
}

TEST(Envelope, RefusesATruncatedOrLengthenedDatagram) {
  const DatagramKey key = key_of(1);
  const EnvelopeSealer sealer(key);
  const auto header = bytes_of(56, 3);
  auto datagram = sealed(sealer, 5, 1, header, {});
  const auto sut = opener_of(key);

  EXPECT_EQ(open_copy(*sut, {datagram.begin(), datagram.end() - 1}), OpenOutcome::kAuthFailure);
  datagram.push_back(std::byte{0});
  EXPECT_EQ(open_copy(*sut, datagram), OpenOutcome::kAuthFailure);
  EXPECT_EQ(open_copy(*sut, {datagram.begin(), datagram.begin() + kEnvelopeBytes - 1}), OpenOutcome::kUnauthenticated);
}

TEST(Envelope, RefusesADatagramSealedWithAnotherKey) {
  const EnvelopeSealer stranger(key_of(2));
  const auto datagram = sealed(stranger, 1, 1, bytes_of(56, 1), {});
  const auto sut = opener_of(key_of(1));

  EXPECT_EQ(open_copy(*sut, datagram), OpenOutcome::kAuthFailure);
}

TEST(Envelope, RefusesAPlainAxonDatagramAsUnauthenticated) {
  std::vector<std::byte> plain = bytes_of(80, 1);
  plain[0] = std::byte{'A'};
  plain[1] = std::byte{'X'};
  plain[2] = std::byte{'N'};
  plain[3] = std::byte{'U'};
  const auto sut = opener_of(key_of(1));

  EXPECT_EQ(open_copy(*sut, plain), OpenOutcome::kUnauthenticated);
}

TEST(Envelope, AcceptsTheCurrentAndThePreviousKeyDuringARotation) {
  const DatagramKey current = key_of(1);
  const DatagramKey previous = key_of(2);
  const auto sut = opener_of(current, &previous);
  const EnvelopeSealer rotated(current);
  const EnvelopeSealer not_yet(previous);
  const EnvelopeSealer retired(key_of(3));

  EXPECT_EQ(open_copy(*sut, sealed(rotated, 10, 1, bytes_of(56, 1), {})), OpenOutcome::kOk);
  EXPECT_EQ(open_copy(*sut, sealed(not_yet, 11, 1, bytes_of(56, 1), {})), OpenOutcome::kOk);
  EXPECT_EQ(open_copy(*sut, sealed(retired, 12, 1, bytes_of(56, 1), {})), OpenOutcome::kAuthFailure);
}

TEST(Envelope, AcceptsARestartedSenderAsANewSession) {
  const DatagramKey key = key_of(1);
  const auto sut = opener_of(key);
  const EnvelopeSealer before(key);
  const EnvelopeSealer after(key);  // the same sender started again: a new random session

  EXPECT_EQ(open_copy(*sut, sealed(before, 100, 500, bytes_of(56, 1), {})), OpenOutcome::kOk);
  EXPECT_EQ(open_copy(*sut, sealed(after, 200, 1, bytes_of(56, 1), {})), OpenOutcome::kOk);
  EXPECT_EQ(open_copy(*sut, sealed(after, 200, 2, bytes_of(56, 1), {})), OpenOutcome::kOk);
}

TEST(Envelope, GivesEachSendingThreadASessionOfItsOwnWithCountersInOrder) {
  const DatagramKey key = key_of(1);
  const EnvelopeSealer sut(key);
  const auto header = bytes_of(56, 1);
  std::array<EnvelopeBytes, 3> mine{};
  EnvelopeBytes theirs{};
  for (auto& envelope : mine) {
    ASSERT_TRUE(sut.seal(envelope, header, {}));
  }
  std::thread other([&] { EXPECT_TRUE(sut.seal(theirs, header, {})); });
  other.join();
  const auto session = [](const EnvelopeBytes& e) { return std::vector<std::byte>(e.begin() + 8, e.begin() + 16); };
  const auto counter = [](const EnvelopeBytes& e) { return std::to_integer<int>(e[16]); };

  EXPECT_EQ(session(mine[0]), session(mine[2]));
  EXPECT_NE(session(mine[0]), session(theirs));
  EXPECT_EQ(counter(mine[0]) + 1, counter(mine[1]));
  EXPECT_EQ(counter(mine[1]) + 1, counter(mine[2]));
  const auto opener = opener_of(key);
  for (const auto& envelope : {mine[0], mine[1], mine[2], theirs}) {
    std::vector<std::byte> datagram(envelope.begin(), envelope.end());
    datagram.insert(datagram.end(), header.begin(), header.end());
    EXPECT_EQ(open_copy(*opener, datagram), OpenOutcome::kOk);
  }
}

}  // namespace
}  // namespace axon::udp
