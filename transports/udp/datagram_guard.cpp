#include "transports/udp/datagram_guard.hpp"

#include <optional>

namespace axon::udp {

Result<DatagramSecurity> DatagramSecurity::create(const SecuritySettings& settings) {
  DatagramSecurity security;
  security.allow = AllowList(settings.allow);
  if (settings.key_file.empty()) {
    if (settings.encrypt) {
      return Error(ErrorCode::kInvalidArgument,
                   "udp security: encrypt: true needs a key_file (the datagrams are encrypted under the domain's "
                   "key): add key_file: PATH, a file of 32 random bytes, mode 0600, the same on every host");
    }
    return security;
  }
  auto current = read_key_file(settings.key_file, "udp security key_file");
  if (!current) {
    return current.error();
  }
  std::optional<DatagramKey> previous;
  if (!settings.previous_key_file.empty()) {
    auto read = read_key_file(settings.previous_key_file, "udp security previous_key_file");
    if (!read) {
      return read.error();
    }
    previous = *read;
  }
  const Protection protection = settings.encrypt ? Protection::kEncrypted : Protection::kAuthenticated;
  auto opener =
      EnvelopeOpener::create(*current, previous ? &*previous : nullptr, EnvelopeOpener::kMaxSessions, protection);
  if (!opener) {
    return opener.error();
  }
  security.sealer = std::make_shared<EnvelopeSealer>(*current, protection);
  security.opener = std::move(*opener);
  return security;
}

bool DatagramGuard::admit(const DatagramPieces& datagram, Endpoint from) noexcept {
  if (!allow_.allows(from.ipv4)) {
    NetworkCounterCells::add(counters_.not_allowed);
    return false;
  }
  if (!opener_) {
    return true;
  }
  switch (opener_->open(datagram)) {
    case OpenOutcome::kOk: return true;
    case OpenOutcome::kUnauthenticated: NetworkCounterCells::add(counters_.unauthenticated); break;
    case OpenOutcome::kAuthFailure: NetworkCounterCells::add(counters_.auth_failures); break;
    case OpenOutcome::kReplay: NetworkCounterCells::add(counters_.replays); break;
    case OpenOutcome::kNotEncrypted:
      NetworkCounterCells::add(counters_.not_encrypted);
      note_protection_mismatch(OpenOutcome::kNotEncrypted, from);
      break;
    case OpenOutcome::kUnexpectedlyEncrypted:
      NetworkCounterCells::add(counters_.unexpectedly_encrypted);
      note_protection_mismatch(OpenOutcome::kUnexpectedlyEncrypted, from);
      break;
  }
  return false;
}

void DatagramGuard::note_protection_mismatch(OpenOutcome outcome, Endpoint from) noexcept {
  bool& noted = outcome == OpenOutcome::kUnexpectedlyEncrypted ? noted_unexpectedly_encrypted_ : noted_not_encrypted_;
  if (!noted && !mismatch_) {
    noted = true;
    mismatch_ = ProtectionMismatch{.outcome = outcome, .from = from};
  }
}

std::optional<ProtectionMismatch> DatagramGuard::take_mismatch() noexcept {
  const std::optional<ProtectionMismatch> taken = mismatch_;
  mismatch_.reset();
  return taken;
}

}  // namespace axon::udp
