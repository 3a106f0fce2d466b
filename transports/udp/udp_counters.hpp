// What a UDP participant counts, and where it reports a topic's remote
// receivers. The transport's own types: the composition root maps them to the
// API's NetworkCounters and TopicRoute (axon/network.hpp), which carry the
// same meanings (docs/design/udp.md, "Counters").
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace axon::udp {

/// A snapshot of the counters (see axon::NetworkCounters for each one's meaning).
struct UdpCounters {
  std::uint64_t datagrams_sent = 0;
  std::uint64_t datagrams_received = 0;
  std::uint64_t datagrams_refused = 0;
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_received = 0;
  std::uint64_t messages_incomplete = 0;
  std::uint64_t messages_out_of_order = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t fragments_in_place = 0;
  std::uint64_t fragments_copied = 0;
  std::uint64_t fragments_stale = 0;
  std::uint64_t nacks_sent = 0;
  std::uint64_t nacks_received = 0;
  std::uint64_t fragments_resent = 0;
  std::uint64_t gaps_sent = 0;
  std::uint64_t messages_lost = 0;
  std::uint64_t hosts_discovered = 0;
  std::uint64_t hosts_lost = 0;
  std::uint64_t type_mismatches = 0;
  std::uint64_t pool_exhausted = 0;
  std::uint64_t receives_on_waiting_threads = 0;
  std::uint64_t auth_failures = 0;
  std::uint64_t replays = 0;
  std::uint64_t not_allowed = 0;
  std::uint64_t unauthenticated = 0;
  std::uint64_t not_encrypted = 0;
  std::uint64_t unexpectedly_encrypted = 0;
};

/// UdpCounters as atomics. Several threads add (publishers and the
/// participant thread): relaxed fetch_add, statistics only.
struct NetworkCounterCells {
  std::atomic<std::uint64_t> datagrams_sent{0};
  std::atomic<std::uint64_t> datagrams_received{0};
  std::atomic<std::uint64_t> datagrams_refused{0};
  std::atomic<std::uint64_t> messages_sent{0};
  std::atomic<std::uint64_t> messages_received{0};
  std::atomic<std::uint64_t> messages_incomplete{0};
  std::atomic<std::uint64_t> messages_out_of_order{0};
  std::atomic<std::uint64_t> duplicates{0};
  std::atomic<std::uint64_t> fragments_in_place{0};
  std::atomic<std::uint64_t> fragments_copied{0};
  std::atomic<std::uint64_t> fragments_stale{0};
  std::atomic<std::uint64_t> nacks_sent{0};
  std::atomic<std::uint64_t> nacks_received{0};
  std::atomic<std::uint64_t> fragments_resent{0};
  std::atomic<std::uint64_t> gaps_sent{0};
  std::atomic<std::uint64_t> messages_lost{0};
  std::atomic<std::uint64_t> hosts_discovered{0};
  std::atomic<std::uint64_t> hosts_lost{0};
  std::atomic<std::uint64_t> type_mismatches{0};
  std::atomic<std::uint64_t> pool_exhausted{0};
  std::atomic<std::uint64_t> receives_on_waiting_threads{0};
  std::atomic<std::uint64_t> auth_failures{0};
  std::atomic<std::uint64_t> replays{0};
  std::atomic<std::uint64_t> not_allowed{0};
  std::atomic<std::uint64_t> unauthenticated{0};
  std::atomic<std::uint64_t> not_encrypted{0};
  std::atomic<std::uint64_t> unexpectedly_encrypted{0};

  static void add(std::atomic<std::uint64_t>& cell, std::uint64_t n = 1) noexcept {
    cell.fetch_add(n, std::memory_order_relaxed);  // a statistic: no ordering needed
  }
  [[nodiscard]] UdpCounters snapshot() const noexcept;
};

/// A remote host that receives a topic (its participants' announcements, summed).
struct RemoteRoute {
  std::string host;
  std::uint32_t subscribers = 0;
  bool reliable = false;  ///< At least one of them is RELIABLE.
};

}  // namespace axon::udp
