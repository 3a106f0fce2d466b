// The envelope of an authenticated datagram: a fixed 40-byte prefix before
// axon's own datagram (docs/design/udp.md, "Authenticated datagrams"):
//
//   0  magic "AXNS" (u32 LE)   4  version   5  key id   6  reserved (0, u16)
//   8  session (u64 LE): one sending thread of one participant incarnation,
//      random (getrandom) when the thread first seals for the participant
//   16 counter (u64 LE): per session, from 1, never repeated
//   24 tag (16 bytes): AES-256-GCM with the 16-byte IV session || counter.
//      Version 1 (authenticated): bytes 0..24 and the whole datagram after the
//      envelope as additional data, empty plaintext (GMAC).
//      Version 2 (encrypted, `encrypt: true`): bytes 0..24 as additional data,
//      the datagram after the envelope as plaintext, sent as its ciphertext.
//
// The IV is unique per key: a session is 64 random bits, and its counter only
// grows. A session per thread (not per participant) keeps each session's
// counters in the order the socket sends them, whatever the threads' order,
// so a small replay window suffices. OpenSSL does the cryptography.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "axon/result.hpp"
#include "transports/udp/datagram_key.hpp"
#include "transports/udp/replay_window.hpp"

using EvpCipherContext = struct evp_cipher_ctx_st;

namespace axon::udp {

inline constexpr std::uint32_t kEnvelopeMagic = 0x534E5841U;  ///< "AXNS" read as a little-endian u32.
inline constexpr std::uint8_t kEnvelopeVersion = 1;           ///< Authenticated: the datagram follows in clear.
inline constexpr std::uint8_t kEncryptedEnvelopeVersion = 2;  ///< Encrypted: the datagram follows as ciphertext.
inline constexpr std::size_t kEnvelopeBytes = 40;
inline constexpr std::size_t kEnvelopeTagOffset = 24;
inline constexpr std::size_t kEnvelopeTagBytes = 16;

using EnvelopeBytes = std::array<std::byte, kEnvelopeBytes>;

/// What the envelope does to the datagram after it (`udp: security: encrypt:`).
enum class Protection : std::uint8_t {
  kAuthenticated,  ///< Version 1: a tag over it, the bytes stay readable.
  kEncrypted,      ///< Version 2: a tag over its ciphertext; only key holders read it.
};

/// Seals the datagrams of one participant under its key.
///
/// Thread safety: seal() from any threads at once. Each thread has a session
/// of its own and OpenSSL contexts of its own (thread-local, a few sealers
/// per thread: made the first time a thread seals for this sealer, then
/// reused), so sealing takes no lock, no atomic and allocates nothing after
/// a thread's first datagram.
class EnvelopeSealer {
 public:
  explicit EnvelopeSealer(const DatagramKey& key, Protection protection = Protection::kAuthenticated) noexcept;
  ~EnvelopeSealer();
  EnvelopeSealer(const EnvelopeSealer&) = delete;
  EnvelopeSealer& operator=(const EnvelopeSealer&) = delete;

  [[nodiscard]] Protection protection() const noexcept { return protection_; }
  [[nodiscard]] bool encrypts() const noexcept { return protection_ == Protection::kEncrypted; }

  /// Writes the envelope of the datagram whose bytes after it are `header`
  /// then `payload`, with the calling thread's session and its next counter.
  /// Encrypting, it writes their ciphertext to `ciphertext` (exactly
  /// header.size() + payload.size() bytes, overlapping neither: the payload
  /// may lie in a chunk others read), which then goes after the envelope
  /// instead of them; authenticating, `ciphertext` is not used.
  /// False when OpenSSL or getrandom() failed, or `ciphertext` has the wrong
  /// size (the envelope is then unusable).
  bool seal(EnvelopeBytes& envelope, std::span<const std::byte> header, std::span<const std::byte> payload,
            std::span<std::byte> ciphertext = {}) const noexcept;
  /// The same with a session and counter of the caller's, who must never use
  /// a pair twice under this key: for tests and the fuzzer's seeds.
  bool seal_as(EnvelopeBytes& envelope, std::uint64_t session, std::uint64_t counter, std::span<const std::byte> header,
               std::span<const std::byte> payload, std::span<std::byte> ciphertext = {}) const noexcept;

 private:
  DatagramKey key_;
  Protection protection_;
  std::uint64_t owner_;  ///< Process-unique: names this sealer's thread-local sessions and contexts.
};

/// A received datagram in up to three pieces (a scatter receive): its
/// `size` bytes are the pieces' bytes in order (the last ones may be longer
/// than needed). The first piece holds at least the envelope when there is one.
/// Writable: an encrypted datagram is decrypted where it lies.
struct DatagramPieces {
  std::array<std::span<std::byte>, 3> pieces{};
  std::size_t size = 0;
};

enum class OpenOutcome : std::uint8_t {
  kOk,                     ///< The tag is right and the counter new: the datagram follows the envelope, in clear.
  kUnauthenticated,        ///< No envelope (too short, another magic or version, a reserved field or session 0).
  kAuthFailure,            ///< The tag does not match under any key accepted (forged, corrupted, another key).
  kReplay,                 ///< The session's counter was accepted already, or is too old.
  kNotEncrypted,           ///< A right tag, but only authenticated while encryption is asked for (no downgrade).
  kUnexpectedlyEncrypted,  ///< A right tag, but encrypted while encryption is not asked for.
};

/// Checks envelopes under one or two keys (the current and the previous:
/// rotation), decrypts encrypted datagrams in place and keeps the replay windows.
///
/// Thread safety: none; the receiving thread owns it. Allocates in create() only.
class EnvelopeOpener {
 public:
  /// Sender sessions remembered (one per sending thread of each participant heard).
  static constexpr std::size_t kMaxSessions = 256;

  /// `max_sessions`: sender sessions remembered (tests and the fuzzer use a
  /// few). `protection`: what the datagrams must carry; the other kind is
  /// refused (kNotEncrypted, kUnexpectedlyEncrypted) even with a right tag.
  static Result<std::unique_ptr<EnvelopeOpener>> create(const DatagramKey& current, const DatagramKey* previous,
                                                        std::size_t max_sessions = kMaxSessions,
                                                        Protection protection = Protection::kAuthenticated);
  ~EnvelopeOpener();
  EnvelopeOpener(const EnvelopeOpener&) = delete;
  EnvelopeOpener& operator=(const EnvelopeOpener&) = delete;

  [[nodiscard]] Protection protection() const noexcept { return protection_; }

  /// Checks the envelope of `datagram` and, when it is right, new and of the
  /// protection asked for, marks its counter seen. The replay check goes
  /// first (cheap), then the tag. An encrypted datagram is decrypted in
  /// place, piece by piece, as its tag is computed: after kOk its bytes are
  /// the datagram in clear; after any other outcome they may be neither
  /// ciphertext nor clear text, and must not be read as a datagram.
  [[nodiscard]] OpenOutcome open(const DatagramPieces& datagram) noexcept;

 private:
  struct Key {
    std::uint8_t id = 0;
    EvpCipherContext* context = nullptr;
  };
  EnvelopeOpener(std::size_t max_sessions, Protection protection) : protection_(protection), windows_(max_sessions) {}
  [[nodiscard]] static bool verify(const Key& key, const DatagramPieces& datagram,
                                   const std::array<unsigned char, 16>& iv) noexcept;
  [[nodiscard]] static bool decrypt(const Key& key, const DatagramPieces& datagram,
                                    const std::array<unsigned char, 16>& iv) noexcept;

  Protection protection_;
  std::array<Key, 2> keys_{};
  std::size_t key_count_ = 0;
  ReplayWindows windows_;
};

}  // namespace axon::udp
