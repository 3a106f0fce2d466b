#include "transports/udp/envelope.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/random.h>

#include <algorithm>
#include <cstring>

namespace axon::udp {
namespace {

constexpr int kIvBytes = 16;
using Iv = std::array<unsigned char, kIvBytes>;

void store_u64(std::byte* at, std::uint64_t value) noexcept {
  for (int i = 0; i < 8; ++i) {
    at[i] = static_cast<std::byte>(value >> (8 * i));
  }
}

std::uint64_t load_u64(const std::byte* at) noexcept {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) {
    value = (value << 8U) | std::to_integer<std::uint64_t>(at[i]);
  }
  return value;
}

std::uint32_t load_u32(const std::byte* at) noexcept {
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) {
    value = (value << 8U) | std::to_integer<std::uint32_t>(at[i]);
  }
  return value;
}

Iv iv_of(std::uint64_t session, std::uint64_t counter) noexcept {
  Iv iv{};
  store_u64(reinterpret_cast<std::byte*>(iv.data()), session);
  store_u64(reinterpret_cast<std::byte*>(iv.data() + 8), counter);
  return iv;
}

/// AES-256-GCM with a 16-byte IV, keyed: later datagrams only set the IV.
bool init_gcm(EVP_CIPHER_CTX* context, const DatagramKey& key, bool encrypt) noexcept {
  const auto* bytes = reinterpret_cast<const unsigned char*>(key.bytes.data());
  return EVP_CipherInit_ex(context, EVP_aes_256_gcm(), nullptr, nullptr, nullptr, encrypt ? 1 : 0) == 1 &&
         EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, kIvBytes, nullptr) == 1 &&
         EVP_CipherInit_ex(context, nullptr, nullptr, bytes, nullptr, encrypt ? 1 : 0) == 1;
}

/// Feeds `bytes` as additional data (GMAC: no plaintext).
bool add_data(EVP_CIPHER_CTX* context, std::span<const std::byte> bytes) noexcept {
  if (bytes.empty()) {
    return true;
  }
  int length = 0;
  return EVP_CipherUpdate(context, nullptr, &length, reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size())) == 1;
}

/// Sealers' sessions and contexts, per thread: a thread sealing for a sealer
/// the first time draws a session and makes a context (allocates), later
/// datagrams reuse them. A slot taken over by another sealer draws a new
/// session when its sealer comes back: a (session, counter) pair is never reused.
struct ThreadSessions {
  struct Slot {
    std::uint64_t owner = 0;
    std::uint64_t session = 0;
    std::uint64_t next_counter = 1;
    EVP_CIPHER_CTX* context = nullptr;
  };
  static constexpr std::size_t kSlots = 4;
  std::array<Slot, kSlots> slots{};
  std::size_t next = 0;  ///< The slot a new sealer takes (round robin).

  ThreadSessions() = default;
  ThreadSessions(const ThreadSessions&) = delete;
  ThreadSessions& operator=(const ThreadSessions&) = delete;
  ~ThreadSessions() {
    for (const Slot& slot : slots) {
      EVP_CIPHER_CTX_free(slot.context);  // cleanses the key schedule
    }
  }

  Slot* slot_for(std::uint64_t owner, const DatagramKey& key) noexcept {
    for (Slot& slot : slots) {
      if (slot.owner == owner) {
        return &slot;
      }
    }
    Slot& slot = slots[next];
    next = (next + 1) % kSlots;
    slot.owner = 0;
    if (slot.context == nullptr) {
      slot.context = EVP_CIPHER_CTX_new();
    }
    std::uint64_t session = 0;
    while (session == 0) {  // 0 is no session
      if (::getrandom(&session, sizeof(session), 0) != sizeof(session)) {
        return nullptr;
      }
    }
    if (slot.context == nullptr || !init_gcm(slot.context, key, true)) {
      return nullptr;
    }
    slot.owner = owner;
    slot.session = session;
    slot.next_counter = 1;
    return &slot;
  }
};

thread_local ThreadSessions thread_sessions;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

/// Sealer ids: never reused, so a thread's session of a sealer gone is never taken for a new one's.
std::atomic<std::uint64_t> next_owner{1};  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

/// Encrypts `plain` into `out` (of the same size), the cipher's stream going on.
bool encrypt_piece(EVP_CIPHER_CTX* context, std::span<const std::byte> plain, std::byte* out) noexcept {
  if (plain.empty()) {
    return true;
  }
  int length = 0;
  // GCM is a stream mode: OpenSSL writes exactly as many bytes as it is given.
  return EVP_EncryptUpdate(context, reinterpret_cast<unsigned char*>(out), &length,
                           reinterpret_cast<const unsigned char*>(plain.data()), static_cast<int>(plain.size())) == 1 &&
         static_cast<std::size_t>(length) == plain.size();
}

/// Writes the envelope's fields and its tag: over them, `header` and
/// `payload` (authenticated), or over them and the ciphertext of `header` and
/// `payload`, written to `ciphertext` (encrypted).
bool seal_with(EVP_CIPHER_CTX* context, EnvelopeBytes& envelope, std::uint8_t key_id, Protection protection,
               std::uint64_t session, std::uint64_t counter, std::span<const std::byte> header,
               std::span<const std::byte> payload, std::span<std::byte> ciphertext) noexcept {
  const bool encrypted = protection == Protection::kEncrypted;
  if (encrypted && ciphertext.size() != header.size() + payload.size()) {
    return false;
  }
  std::byte* const e = envelope.data();
  store_u64(e, 0);
  e[0] = static_cast<std::byte>(kEnvelopeMagic & 0xFFU);
  e[1] = static_cast<std::byte>((kEnvelopeMagic >> 8U) & 0xFFU);
  e[2] = static_cast<std::byte>((kEnvelopeMagic >> 16U) & 0xFFU);
  e[3] = static_cast<std::byte>(kEnvelopeMagic >> 24U);
  e[4] = static_cast<std::byte>(encrypted ? kEncryptedEnvelopeVersion : kEnvelopeVersion);
  e[5] = static_cast<std::byte>(key_id);
  store_u64(e + 8, session);
  store_u64(e + 16, counter);
  const Iv iv = iv_of(session, counter);
  if (EVP_EncryptInit_ex(context, nullptr, nullptr, nullptr, iv.data()) != 1 ||
      !add_data(context, std::span(envelope).first(kEnvelopeTagOffset))) {
    return false;
  }
  const bool fed = encrypted ? encrypt_piece(context, header, ciphertext.data()) &&
                                   encrypt_piece(context, payload, ciphertext.data() + header.size())
                             : add_data(context, header) && add_data(context, payload);
  int length = 0;
  std::array<unsigned char, 16> none{};  // GCM's final step writes nothing
  return fed && EVP_EncryptFinal_ex(context, none.data(), &length) == 1 &&
         EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, kEnvelopeTagBytes, e + kEnvelopeTagOffset) == 1;
}

/// Calls `f` on each part of the datagram after its envelope, piece by piece
/// in order, up to its size; false when a call failed or the pieces are too short.
template <class F>
bool for_each_part(const DatagramPieces& datagram, const F& f) noexcept {
  std::size_t left = datagram.size - kEnvelopeBytes;
  std::size_t skip = kEnvelopeBytes;
  for (const std::span<std::byte> piece : datagram.pieces) {
    if (skip >= piece.size()) {
      skip -= piece.size();
      continue;
    }
    const std::size_t take = std::min(left, piece.size() - skip);
    if (take > 0 && !f(piece.subspan(skip, take))) {
      return false;
    }
    left -= take;
    skip = 0;
  }
  return left == 0;
}

}  // namespace

EnvelopeSealer::EnvelopeSealer(const DatagramKey& key, Protection protection) noexcept
    : key_(key),
      protection_(protection),
      owner_(next_owner.fetch_add(1, std::memory_order_relaxed)) {}  // relaxed: only uniqueness matters

EnvelopeSealer::~EnvelopeSealer() { OPENSSL_cleanse(key_.bytes.data(), key_.bytes.size()); }

bool EnvelopeSealer::seal(EnvelopeBytes& envelope, std::span<const std::byte> header,
                          std::span<const std::byte> payload, std::span<std::byte> ciphertext) const noexcept {
  ThreadSessions::Slot* const slot = thread_sessions.slot_for(owner_, key_);
  return slot != nullptr && seal_with(slot->context, envelope, key_.id, protection_, slot->session,
                                      slot->next_counter++, header, payload, ciphertext);
}

bool EnvelopeSealer::seal_as(EnvelopeBytes& envelope, std::uint64_t session, std::uint64_t counter,
                             std::span<const std::byte> header, std::span<const std::byte> payload,
                             std::span<std::byte> ciphertext) const noexcept {
  ThreadSessions::Slot* const slot = thread_sessions.slot_for(owner_, key_);
  return slot != nullptr &&
         seal_with(slot->context, envelope, key_.id, protection_, session, counter, header, payload, ciphertext);
}

Result<std::unique_ptr<EnvelopeOpener>> EnvelopeOpener::create(const DatagramKey& current, const DatagramKey* previous,
                                                               std::size_t max_sessions, Protection protection) {
  std::unique_ptr<EnvelopeOpener> opener(new EnvelopeOpener(max_sessions, protection));
  const std::array<const DatagramKey*, 2> keys{&current, previous};
  for (const DatagramKey* key : keys) {
    if (key == nullptr) {
      continue;
    }
    Key& slot = opener->keys_[opener->key_count_++];
    slot.id = key->id;
    slot.context = EVP_CIPHER_CTX_new();
    if (slot.context == nullptr || !init_gcm(slot.context, *key, false)) {
      return Error(ErrorCode::kSystem, "udp security: OpenSSL could not set up AES-256-GCM (is libcrypto usable?)");
    }
  }
  return opener;
}

EnvelopeOpener::~EnvelopeOpener() {
  for (const Key& key : keys_) {
    EVP_CIPHER_CTX_free(key.context);
  }
}

namespace {

/// Checks the tag of `datagram` under `context` and `iv`, feeding each part after the envelope to `feed_part`
/// (as additional data, or decrypted in place) between the envelope's prefix and the tag.
template <class F>
bool check_tag(EVP_CIPHER_CTX* context, const DatagramPieces& datagram, const Iv& iv, const F& feed_part) noexcept {
  const std::span<std::byte> first = datagram.pieces[0];
  std::array<unsigned char, kEnvelopeTagBytes> tag{};
  std::memcpy(tag.data(), first.data() + kEnvelopeTagOffset, tag.size());
  int length = 0;
  std::array<unsigned char, 16> none{};
  return EVP_DecryptInit_ex(context, nullptr, nullptr, nullptr, iv.data()) == 1 &&
         add_data(context, first.first(kEnvelopeTagOffset)) && for_each_part(datagram, feed_part) &&
         EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, kEnvelopeTagBytes, tag.data()) == 1 &&
         EVP_DecryptFinal_ex(context, none.data(), &length) == 1;
}

}  // namespace

bool EnvelopeOpener::verify(const Key& key, const DatagramPieces& datagram, const Iv& iv) noexcept {
  return check_tag(key.context, datagram, iv,
                   [&](std::span<const std::byte> part) { return add_data(key.context, part); });
}

bool EnvelopeOpener::decrypt(const Key& key, const DatagramPieces& datagram, const Iv& iv) noexcept {
  // In place (OpenSSL allows out == in), one pass: the tag is known only
  // after the last byte, so a datagram that fails it is left garbled; the
  // caller never reads it (open()'s contract, ScatterReceive's reasoning).
  return check_tag(key.context, datagram, iv, [&](std::span<std::byte> part) {
    int length = 0;
    auto* bytes = reinterpret_cast<unsigned char*>(part.data());
    return EVP_DecryptUpdate(key.context, bytes, &length, bytes, static_cast<int>(part.size())) == 1 &&
           static_cast<std::size_t>(length) == part.size();
  });
}

OpenOutcome EnvelopeOpener::open(const DatagramPieces& datagram) noexcept {
  const std::span<const std::byte> first = datagram.pieces[0];
  if (datagram.size < kEnvelopeBytes || first.size() < kEnvelopeBytes || load_u32(first.data()) != kEnvelopeMagic ||
      first[6] != std::byte{0} || first[7] != std::byte{0}) {
    return OpenOutcome::kUnauthenticated;
  }
  const auto version = std::to_integer<std::uint8_t>(first[4]);
  if (version != kEnvelopeVersion && version != kEncryptedEnvelopeVersion) {
    return OpenOutcome::kUnauthenticated;
  }
  const bool encrypted = version == kEncryptedEnvelopeVersion;
  const auto key_id = std::to_integer<std::uint8_t>(first[5]);
  const std::uint64_t session = load_u64(first.data() + 8);
  const std::uint64_t counter = load_u64(first.data() + 16);
  if (session == 0) {
    return OpenOutcome::kUnauthenticated;  // no sealer draws it: not an envelope of ours
  }
  if (!windows_.fresh(session, counter)) {
    return OpenOutcome::kReplay;
  }
  const Iv iv = iv_of(session, counter);
  bool verified = false;
  const Key* garbled_by = nullptr;  // the key an encrypted datagram was decrypted under, in vain
  for (std::size_t k = 0; k < key_count_ && !verified; ++k) {
    if (keys_[k].id != key_id) {
      continue;
    }
    if (!encrypted) {
      verified = verify(keys_[k], datagram, iv);
      continue;
    }
    if (garbled_by != nullptr) {
      // Both keys share the id and the first failed: decrypting again with
      // its key stream (CTR undoes itself) gives the ciphertext back.
      (void)decrypt(*garbled_by, datagram, iv);
    }
    verified = decrypt(keys_[k], datagram, iv);
    garbled_by = verified ? nullptr : &keys_[k];
  }
  if (!verified) {
    return OpenOutcome::kAuthFailure;
  }
  // A key holder's datagram, but of the other protection: refused (no
  // downgrade), and not marked seen, so the window stays the accepted ones'.
  if (encrypted != (protection_ == Protection::kEncrypted)) {
    return encrypted ? OpenOutcome::kUnexpectedlyEncrypted : OpenOutcome::kNotEncrypted;
  }
  windows_.accept(session, counter);
  return OpenOutcome::kOk;
}

}  // namespace axon::udp
