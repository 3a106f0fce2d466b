// What stands between the sockets and the parser when the config asks for
// security: the allow-list of source addresses and the envelope's check
// (tag and replay window). A datagram it refuses is counted by reason and
// never parsed (docs/design/udp.md, "Authenticated datagrams").
#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include "axon/result.hpp"
#include "transports/udp/allow_list.hpp"
#include "transports/udp/envelope.hpp"
#include "transports/udp/udp_counters.hpp"
#include "transports/udp/udp_settings.hpp"
#include "transports/udp/udp_socket.hpp"

namespace axon::udp {

/// The keys and the allow-list of a participant, read from its settings.
struct DatagramSecurity {
  std::shared_ptr<const EnvelopeSealer> sealer;  ///< Null: no key, datagrams go without an envelope.
  std::unique_ptr<EnvelopeOpener> opener;        ///< Null: no key.
  AllowList allow;

  /// Reads the key files (refusing a file others may read, with the fix).
  static Result<DatagramSecurity> create(const SecuritySettings& settings);
  /// Bytes the envelope adds to every datagram (0 without a key).
  [[nodiscard]] std::size_t envelope_bytes() const noexcept { return opener ? kEnvelopeBytes : 0; }
};

/// A key holder's datagram refused for the other `encrypt` setting.
struct ProtectionMismatch {
  OpenOutcome outcome = OpenOutcome::kNotEncrypted;  ///< kNotEncrypted or kUnexpectedlyEncrypted.
  Endpoint from;
};

/// Thread safety: none; whoever holds the receive turn calls admit().
class DatagramGuard {
 public:
  /// `opener` null: no envelope expected; `allow` empty: any source.
  DatagramGuard(std::unique_ptr<EnvelopeOpener> opener, AllowList allow, NetworkCounterCells& counters) noexcept
      : opener_(std::move(opener)), allow_(std::move(allow)), counters_(counters) {}

  /// Whether there is anything to check (false: admit() always says yes).
  [[nodiscard]] bool active() const noexcept { return opener_ || !allow_.empty(); }
  [[nodiscard]] std::size_t envelope_bytes() const noexcept { return opener_ ? kEnvelopeBytes : 0; }

  /// Whether the datagram in `datagram` from `from` may be parsed (its bytes
  /// after envelope_bytes(), decrypted in place when encrypted); a refusal is
  /// counted (not_allowed, unauthenticated, auth_failures, replays,
  /// not_encrypted, unexpectedly_encrypted) and its bytes must not be read.
  /// Does not allocate.
  [[nodiscard]] bool admit(const DatagramPieces& datagram, Endpoint from) noexcept;

  /// The first datagram of each kind refused for the other `encrypt` setting,
  /// once, for the caller to say what is wrong and the fix (a log line: the
  /// guard itself logs nothing, so that the fuzzer runs it without a logger).
  [[nodiscard]] std::optional<ProtectionMismatch> take_mismatch() noexcept;

 private:
  void note_protection_mismatch(OpenOutcome outcome, Endpoint from) noexcept;

  std::unique_ptr<EnvelopeOpener> opener_;
  AllowList allow_;
  NetworkCounterCells& counters_;
  std::optional<ProtectionMismatch> mismatch_;  ///< Noted, not taken yet.
  bool noted_not_encrypted_ = false;
  bool noted_unexpectedly_encrypted_ = false;
};

}  // namespace axon::udp
