// When the delayer (axon-net-delay, nfqueue_delayer.cpp) lets each packet go:
// the pure logic, apart from the netlink I/O so that it can be unit-tested.
//
// The delay and reorder faults of a chaos run mean what netem's did
// (tc qdisc ... netem delay D J, netem delay D reorder P%):
// - delay: every packet waits delay_ms +- jitter_ms, drawn uniformly per
//   packet. Packets go in the order of their release times, as netem's
//   time-ordered queue sends them: a jitter larger than the gap between two
//   packets reorders them (netem keeps the order only with a rate limit).
// - reorder: `immediate_percent` of the packets go at once, the others wait
//   delay_ms (netem's `reorder P%` with its default gap of 1), so the ones
//   that go at once overtake those that wait. The waiting ones keep their order.
// The draws come from `seed` alone: the same seed gives the same delays for the
// n-th packet, whatever the packets' times.
#pragma once

#include <cstdint>
#include <queue>
#include <random>
#include <vector>

namespace axon_bench {

struct DelayParams {
  double delay_ms = 0;
  double jitter_ms = 0;          ///< At most delay_ms.
  double immediate_percent = 0;  ///< reorder: packets sent at once; 0 for delay.
  std::uint64_t seed = 0;
};

/// Draws each packet's release time. Not thread-safe (one delayer thread).
class DelayPlan {
 public:
  explicit DelayPlan(const DelayParams& params) noexcept;

  /// The time the packet that arrived at `arrival_ns` goes (== arrival_ns: at once). Call once per packet,
  /// in arrival order.
  [[nodiscard]] std::int64_t release_ns(std::int64_t arrival_ns) noexcept;

 private:
  DelayParams params_;
  std::mt19937_64 rng_;
};

/// A packet the delayer holds: the kernel's id for its verdict and when it goes.
struct HeldPacket {
  std::uint32_t id = 0;
  std::int64_t release_ns = 0;
  std::uint64_t arrival = 0;  ///< Arrival order: equal release times go first come, first served.
};

/// The packets held, earliest release first. Allocates as it grows (a burst); not thread-safe.
class HeldPackets {
 public:
  void hold(std::uint32_t id, std::int64_t release_ns);

  /// Removes the packets due at `now_ns` and appends their ids to `out`, in release order.
  void take_due(std::int64_t now_ns, std::vector<std::uint32_t>& out);

  /// Removes every packet (SIGTERM: all go at once) and appends their ids to `out`, in release order.
  void take_all(std::vector<std::uint32_t>& out);

  [[nodiscard]] bool empty() const noexcept { return queue_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return queue_.size(); }
  /// The earliest release time; only when not empty().
  [[nodiscard]] std::int64_t next_release_ns() const noexcept { return queue_.top().release_ns; }

 private:
  struct Later {
    bool operator()(const HeldPacket& a, const HeldPacket& b) const noexcept {
      return a.release_ns != b.release_ns ? a.release_ns > b.release_ns : a.arrival > b.arrival;
    }
  };
  std::priority_queue<HeldPacket, std::vector<HeldPacket>, Later> queue_;
  std::uint64_t arrivals_ = 0;
};

}  // namespace axon_bench
