#include "transports/udp/udp_counters.hpp"

namespace axon::udp {

UdpCounters NetworkCounterCells::snapshot() const noexcept {
  const auto get = [](const std::atomic<std::uint64_t>& cell) { return cell.load(std::memory_order_relaxed); };
  return UdpCounters{.datagrams_sent = get(datagrams_sent),
                     .datagrams_received = get(datagrams_received),
                     .datagrams_refused = get(datagrams_refused),
                     .messages_sent = get(messages_sent),
                     .messages_received = get(messages_received),
                     .messages_incomplete = get(messages_incomplete),
                     .messages_out_of_order = get(messages_out_of_order),
                     .duplicates = get(duplicates),
                     .fragments_in_place = get(fragments_in_place),
                     .fragments_copied = get(fragments_copied),
                     .fragments_stale = get(fragments_stale),
                     .nacks_sent = get(nacks_sent),
                     .nacks_received = get(nacks_received),
                     .fragments_resent = get(fragments_resent),
                     .gaps_sent = get(gaps_sent),
                     .messages_lost = get(messages_lost),
                     .hosts_discovered = get(hosts_discovered),
                     .hosts_lost = get(hosts_lost),
                     .type_mismatches = get(type_mismatches),
                     .pool_exhausted = get(pool_exhausted),
                     .receives_on_waiting_threads = get(receives_on_waiting_threads),
                     .auth_failures = get(auth_failures),
                     .replays = get(replays),
                     .not_allowed = get(not_allowed),
                     .unauthenticated = get(unauthenticated),
                     .not_encrypted = get(not_encrypted),
                     .unexpectedly_encrypted = get(unexpectedly_encrypted)};
}

}  // namespace axon::udp
