// What every sender of a UDP participant shares: the socket, the participant's
// id on the wire and its counters.
#pragma once

#include <atomic>
#include <cstdint>

#include "axon/network.hpp"
#include "transports/udp/udp_socket.hpp"

namespace axon::udp {

/// NetworkCounters as atomics. Several threads add (publishers and the
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

  static void add(std::atomic<std::uint64_t>& cell, std::uint64_t n = 1) noexcept {
    cell.fetch_add(n, std::memory_order_relaxed);  // a statistic: no ordering needed
  }
  [[nodiscard]] NetworkCounters snapshot() const noexcept;
};

struct SendContext {
  UdpSocket* socket = nullptr;
  std::uint64_t sender_id = 0;
  NetworkCounterCells* counters = nullptr;
  bool checksum = false;
  std::uint32_t fragment_bytes = 0;
  std::uint32_t max_message_bytes = 0;
};

}  // namespace axon::udp
