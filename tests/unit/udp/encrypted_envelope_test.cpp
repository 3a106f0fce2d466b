// The encrypted envelope (`encrypt: true`): the datagram after it goes as
// ciphertext and comes back in clear, in one piece and split at every place a
// scatter receive could split it; one flipped bit anywhere is refused; an
// authenticated-only datagram is refused by an encrypting receiver and an
// encrypted one by a receiver that does not encrypt, each as its own outcome;
// the sealer never writes the bytes it encrypts.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "transports/udp/envelope.hpp"

namespace axon::udp {
namespace {

DatagramKey key_of(std::uint8_t fill) {
  std::array<std::byte, kKeyBytes> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::byte>(fill + 3 * i);
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

std::vector<std::byte> concat(std::span<const std::byte> a, std::span<const std::byte> b) {
  std::vector<std::byte> out(a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

/// An encrypted datagram: the envelope, then the ciphertext of header and payload.
std::vector<std::byte> encrypted(const EnvelopeSealer& sealer, std::uint64_t session, std::uint64_t counter,
                                 std::span<const std::byte> header, std::span<const std::byte> payload) {
  EnvelopeBytes envelope{};
  std::vector<std::byte> ciphertext(header.size() + payload.size());
  EXPECT_TRUE(sealer.seal_as(envelope, session, counter, header, payload, ciphertext));
  return concat(envelope, ciphertext);
}

/// An authenticated-only datagram: the envelope, then header and payload in clear.
std::vector<std::byte> authenticated(const EnvelopeSealer& sealer, std::uint64_t session, std::uint64_t counter,
                                     std::span<const std::byte> header, std::span<const std::byte> payload) {
  EnvelopeBytes envelope{};
  EXPECT_TRUE(sealer.seal_as(envelope, session, counter, header, payload));
  return concat(concat(envelope, header), payload);
}

DatagramPieces whole(std::span<std::byte> datagram) {
  return DatagramPieces{.pieces = {datagram, {}, {}}, .size = datagram.size()};
}

std::unique_ptr<EnvelopeOpener> opener_of(const DatagramKey& current, Protection protection,
                                          const DatagramKey* previous = nullptr) {
  auto opener = EnvelopeOpener::create(current, previous, 8, protection);
  EXPECT_TRUE(opener.ok());
  return std::move(*opener);
}

/// Whether any 8 consecutive bytes of `needle` appear in `haystack`.
bool shares_eight_bytes(std::span<const std::byte> haystack, std::span<const std::byte> needle) {
  for (std::size_t i = 0; i + 8 <= needle.size(); ++i) {
    if (std::search(haystack.begin(), haystack.end(), needle.begin() + i, needle.begin() + i + 8) != haystack.end()) {
      return true;
    }
  }
  return false;
}

TEST(EncryptedEnvelope, OpensWhatItSealedInClearAndRefusesItTheSecondTime) {
  const DatagramKey key = key_of(1);
  const EnvelopeSealer sealer(key, Protection::kEncrypted);
  const auto header = bytes_of(64, 3);
  const auto payload = bytes_of(1368, 9);
  const auto datagram = encrypted(sealer, 0x1234, 1, header, payload);
  const auto sut = opener_of(key, Protection::kEncrypted);

  EXPECT_EQ(std::to_integer<int>(datagram[4]), kEncryptedEnvelopeVersion);
  EXPECT_FALSE(shares_eight_bytes(datagram, concat(header, payload))) << "clear text on the wire";
  auto received = datagram;
  ASSERT_EQ(sut->open(whole(received)), OpenOutcome::kOk);
  EXPECT_EQ(std::vector(received.begin() + kEnvelopeBytes, received.end()), concat(header, payload));
  auto again = datagram;
  EXPECT_EQ(sut->open(whole(again)), OpenOutcome::kReplay);
}

TEST(EncryptedEnvelope, SealingReadsTheDatagramAndWritesOnlyTheCiphertext) {
  const EnvelopeSealer sut(key_of(1), Protection::kEncrypted);
  const auto header = bytes_of(64, 3);
  const auto payload = bytes_of(500, 4);
  std::vector<std::byte> block = concat(header, payload);  // header and payload where the sender keeps them
  const auto before = block;
  std::vector<std::byte> ciphertext(block.size() + 10, std::byte{0xEE});
  EnvelopeBytes envelope{};

  ASSERT_TRUE(sut.seal(envelope, std::span(block).first(64), std::span(block).subspan(64),
                       std::span(ciphertext).first(block.size())));

  EXPECT_EQ(block, before) << "the payload lies in a chunk that local subscribers read: never encrypted in place";
  EXPECT_TRUE(std::all_of(ciphertext.end() - 10, ciphertext.end(), [](std::byte b) { return b == std::byte{0xEE}; }));
  EXPECT_FALSE(sut.seal(envelope, header, payload, std::span(ciphertext).first(10)))
      << "a ciphertext of the wrong size";
  EXPECT_FALSE(sut.seal(envelope, header, payload)) << "encrypting needs somewhere to put the ciphertext";
}

TEST(EncryptedEnvelope, GivesTheSameBytesADifferentCiphertextForEveryCounter) {
  const EnvelopeSealer sut(key_of(1), Protection::kEncrypted);
  const auto header = bytes_of(64, 3);
  const auto first = encrypted(sut, 9, 1, header, {});
  const auto second = encrypted(sut, 9, 2, header, {});

  EXPECT_NE(std::vector(first.begin() + kEnvelopeBytes, first.end()),
            std::vector(second.begin() + kEnvelopeBytes, second.end()));
}

TEST(EncryptedEnvelope, RefusesEveryDatagramWithOneBitFlippedAnywhere) {
  const DatagramKey key = key_of(1);
  const EnvelopeSealer sealer(key, Protection::kEncrypted);
  const auto original = encrypted(sealer, 0xABCDEF, 9, bytes_of(64, 3), bytes_of(100, 4));

  for (std::size_t i = 0; i < original.size(); ++i) {
    for (unsigned bit = 0; bit < 8; ++bit) {
      auto tampered = original;
      tampered[i] ^= static_cast<std::byte>(1U << bit);
      const auto sut = opener_of(key, Protection::kEncrypted);  // a fresh window: only the tag or the framing refuse
      const OpenOutcome outcome = sut->open(whole(tampered));
      EXPECT_NE(outcome, OpenOutcome::kOk) << "byte " << i << " bit " << bit;
      if (i >= 8) {  // past magic, version, key id and reserved: the tag catches it
        EXPECT_EQ(outcome, OpenOutcome::kAuthFailure) << "byte " << i << " bit " << bit;
      }
    }
  }
  auto intact = original;
  EXPECT_EQ(opener_of(key, Protection::kEncrypted)->open(whole(intact)), OpenOutcome::kOk);
}

TEST(EncryptedEnvelope, OpensADatagramSplitInThreePiecesAtEveryBoundary) {
  const DatagramKey key = key_of(1);
  const EnvelopeSealer sealer(key, Protection::kEncrypted);
  const auto sut = opener_of(key, Protection::kEncrypted);
  const auto header = bytes_of(64, 3);
  const auto payload = bytes_of(90, 5);
  const auto clear = concat(header, payload);
  std::uint64_t counter = 0;
  std::size_t splits = 0;
  // As a scatter receive leaves it: the first piece holds the envelope (and
  // maybe more), the second any middle, the third the rest and spare room.
  for (std::size_t a = kEnvelopeBytes; a <= kEnvelopeBytes + clear.size(); ++a) {
    for (std::size_t b = a; b <= kEnvelopeBytes + clear.size(); ++b) {
      auto datagram = encrypted(sealer, 77, ++counter, header, payload);
      std::vector<std::byte> first(datagram.begin(), datagram.begin() + static_cast<std::ptrdiff_t>(a));
      std::vector<std::byte> middle(datagram.begin() + static_cast<std::ptrdiff_t>(a),
                                    datagram.begin() + static_cast<std::ptrdiff_t>(b));
      std::vector<std::byte> last(datagram.begin() + static_cast<std::ptrdiff_t>(b), datagram.end());
      last.resize(last.size() + 7, std::byte{0x5A});  // room beyond the datagram: not read, not written
      const DatagramPieces pieces{.pieces = {first, middle, last}, .size = datagram.size()};

      ASSERT_EQ(sut->open(pieces), OpenOutcome::kOk) << "split at " << a << ", " << b;
      auto joined = concat(concat(first, middle), last);
      EXPECT_EQ(std::vector(joined.begin() + kEnvelopeBytes, joined.begin() + kEnvelopeBytes + clear.size()), clear)
          << "split at " << a << ", " << b;
      EXPECT_TRUE(std::all_of(last.end() - 7, last.end(), [](std::byte x) { return x == std::byte{0x5A}; }));

      // The same split with one byte of the middle (or, when empty, the last piece) changed: refused.
      auto forged = encrypted(sealer, 78, counter, header, payload);
      forged[b == a ? datagram.size() - 1 : a] ^= std::byte{0x20};
      std::vector<std::byte> f1(forged.begin(), forged.begin() + static_cast<std::ptrdiff_t>(a));
      std::vector<std::byte> f2(forged.begin() + static_cast<std::ptrdiff_t>(a),
                                forged.begin() + static_cast<std::ptrdiff_t>(b));
      std::vector<std::byte> f3(forged.begin() + static_cast<std::ptrdiff_t>(b), forged.end());
      EXPECT_EQ(sut->open(DatagramPieces{.pieces = {f1, f2, f3}, .size = forged.size()}), OpenOutcome::kAuthFailure)
          << "split at " << a << ", " << b;
      ++splits;
    }
  }
  EXPECT_EQ(splits, (clear.size() + 1) * (clear.size() + 2) / 2);
}

TEST(EncryptedEnvelope, AnEncryptingReceiverRefusesAnAuthenticatedOnlyDatagramAsNotEncrypted) {
  const DatagramKey key = key_of(1);
  const EnvelopeSealer downgraded(key, Protection::kAuthenticated);
  const EnvelopeSealer sealer(key, Protection::kEncrypted);
  const auto sut = opener_of(key, Protection::kEncrypted);
  const auto header = bytes_of(56, 2);

  auto plain = authenticated(downgraded, 5, 1, header, {});
  EXPECT_EQ(sut->open(whole(plain)), OpenOutcome::kNotEncrypted);
  // Forged with another key: a tag failure, whatever its version says.
  auto forged = authenticated(EnvelopeSealer(key_of(2)), 5, 2, header, {});
  EXPECT_EQ(sut->open(whole(forged)), OpenOutcome::kAuthFailure);
  // The refused counter is not taken as seen: the session's encrypted datagram of that counter still opens.
  auto right = encrypted(sealer, 5, 1, header, {});
  EXPECT_EQ(sut->open(whole(right)), OpenOutcome::kOk);
}

TEST(EncryptedEnvelope, AReceiverThatDoesNotEncryptRefusesAnEncryptedDatagram) {
  const DatagramKey key = key_of(1);
  const EnvelopeSealer sealer(key, Protection::kEncrypted);
  const auto sut = opener_of(key, Protection::kAuthenticated);
  const auto header = bytes_of(56, 2);

  auto datagram = encrypted(sealer, 6, 1, header, {});
  EXPECT_EQ(sut->open(whole(datagram)), OpenOutcome::kUnexpectedlyEncrypted);
  auto forged = encrypted(EnvelopeSealer(key_of(2), Protection::kEncrypted), 6, 2, header, {});
  EXPECT_EQ(sut->open(whole(forged)), OpenOutcome::kAuthFailure);
  auto plain = authenticated(EnvelopeSealer(key), 6, 1, header, {});
  EXPECT_EQ(sut->open(whole(plain)), OpenOutcome::kOk);
}

/// Two keys whose ids (the first byte of their SHA-256) are the same.
std::optional<std::pair<DatagramKey, DatagramKey>> keys_sharing_an_id() {
  std::array<std::optional<DatagramKey>, 256> by_id{};
  for (unsigned seed = 0; seed < 4096; ++seed) {
    std::array<std::byte, kKeyBytes> bytes{};
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = static_cast<std::byte>((seed >> (8 * (i % 2))) + i);
    }
    const DatagramKey key = *make_datagram_key(bytes);
    if (by_id[key.id] && by_id[key.id]->bytes != key.bytes) {
      return std::pair{*by_id[key.id], key};
    }
    by_id[key.id] = key;
  }
  return std::nullopt;
}

TEST(EncryptedEnvelope, AcceptsThePreviousKeyDuringARotationEvenWhenBothKeysShareTheirId) {
  const auto keys = keys_sharing_an_id();
  ASSERT_TRUE(keys);
  const auto& [current, previous] = *keys;
  ASSERT_EQ(current.id, previous.id);
  const auto sut = opener_of(current, Protection::kEncrypted, &previous);
  const auto header = bytes_of(64, 1);
  const auto payload = bytes_of(300, 2);

  // The current key is tried first: decrypting under it garbles the bytes,
  // which must be given back before the previous key can open them.
  auto old = encrypted(EnvelopeSealer(previous, Protection::kEncrypted), 20, 1, header, payload);
  ASSERT_EQ(sut->open(whole(old)), OpenOutcome::kOk);
  EXPECT_EQ(std::vector(old.begin() + kEnvelopeBytes, old.end()), concat(header, payload));
  auto fresh = encrypted(EnvelopeSealer(current, Protection::kEncrypted), 21, 1, header, payload);
  ASSERT_EQ(sut->open(whole(fresh)), OpenOutcome::kOk);
  EXPECT_EQ(std::vector(fresh.begin() + kEnvelopeBytes, fresh.end()), concat(header, payload));
  auto retired = encrypted(EnvelopeSealer(key_of(9), Protection::kEncrypted), 22, 1, header, payload);
  EXPECT_EQ(sut->open(whole(retired)), OpenOutcome::kAuthFailure);
}

}  // namespace
}  // namespace axon::udp
