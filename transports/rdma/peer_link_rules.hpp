// The two rules of the links between participants (docs/design/rdma-transport.md,
// "One queue pair per pair of nodes", "Faults"), kept apart from the rdma_cm
// code so that they are tested on any host:
//
// - who connects: the participant with the smaller sender id is the rdma_cm
//   active side, the other waits for its request, so two participants that
//   want each other at once make one queue pair, not two;
// - when the active side tries again after a failed or lost connection:
//   100 ms after the first failure, doubling with each failure in a row, at
//   most 2 s apart; a connection that came up starts the count again.
//
// Thread safety: pure values. No allocation.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace axon::rdma {

/// True when the participant `own` connects to `peer` (rdma_cm active side).
[[nodiscard]] constexpr bool connects_actively(std::uint64_t own, std::uint64_t peer) noexcept { return own < peer; }

/// The first retry's delay and the longest one (the design's `rdma.reconnect_ms`
/// proposal: 100 ms doubling; capped at 2 s so that a peer restarted after a
/// long outage is back within about 2 s of listening again).
inline constexpr std::chrono::milliseconds kReconnectFirst{100};
inline constexpr std::chrono::milliseconds kReconnectMost{2000};

struct ReconnectBackoff {
  std::chrono::milliseconds first = kReconnectFirst;
  std::chrono::milliseconds most = kReconnectMost;

  /// The wait before the next attempt after `failures` failures in a row
  /// (1: the first): first * 2^(failures-1), at most `most`.
  [[nodiscard]] constexpr std::chrono::milliseconds delay(std::uint32_t failures) const noexcept {
    std::chrono::milliseconds d = first;
    for (std::uint32_t i = 1; i < failures && d < most; ++i) {
      d *= 2;
    }
    return std::min(d, most);
  }
};

}  // namespace axon::rdma
