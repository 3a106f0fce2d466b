#include "transports/udp/datagram_guard.hpp"

#include <optional>

namespace axon::udp {

Result<DatagramSecurity> DatagramSecurity::create(const SecuritySettings& settings) {
  DatagramSecurity security;
  security.allow = AllowList(settings.allow);
  if (settings.key_file.empty()) {
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
  auto opener = EnvelopeOpener::create(*current, previous ? &*previous : nullptr);
  if (!opener) {
    return opener.error();
  }
  security.sealer = std::make_shared<EnvelopeSealer>(*current);
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
  }
  return false;
}

}  // namespace axon::udp
