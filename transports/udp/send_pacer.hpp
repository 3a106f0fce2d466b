// How fast a RELIABLE writer may send new messages. Nothing in the kernel
// holds a UDP sender back when its receiver falls behind (over a veth the
// send buffer is given back as soon as a datagram crosses; a fast sender
// overruns the receiver's socket buffer), and a writer that sends faster than
// its receiver reads loses datagrams, then sends them again, which loads the
// receiver more. The receiver's NACKs are the writer's only news of it, so
// the pacer treats a NACK that needs resends as loss (AIMD, as TCP and NORM
// do): the first one halves the writer's recent average rate, later ones cut
// the limit by a quarter (once per overrun: losses of messages sent before the
// last cut do not count again, and at most once per kDecreaseIntervalNs); every
// kIncreaseIntervalNs without loss the limit grows by 1/32 of the rate before
// the last cut, but never beyond twice what the writer really sends (so a
// limit it does not feel cannot grow unchecked). Until the first loss nothing
// is delayed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace axon::udp {

/// Thread safety: none; the writer calls it under its mutex. Allocates nothing.
class SendPacer {
 public:
  /// Rates are bytes per second; kUnlimited: no pacing.
  static constexpr double kUnlimited = 0.0;
  static constexpr double kMinBytesPerSecond = 4.0 * 1024 * 1024;
  static constexpr std::int64_t kDecreaseIntervalNs = 50'000'000;
  static constexpr std::int64_t kIncreaseIntervalNs = 10'000'000;
  /// Bytes that may leave at once after a pause (a few large messages).
  static constexpr double kBurstBytes = 2.0 * 1024 * 1024;

  /// How long to wait at `now_ns` before the next message may be sent (0: now).
  [[nodiscard]] std::int64_t delay_ns(std::int64_t now_ns) noexcept;
  /// `bytes` went out at `now_ns` (new data or resends: both load the receiver).
  void sent(std::int64_t now_ns, std::size_t bytes) noexcept;
  /// A receiver reported at `now_ns` that it lost some of message
  /// `lost_sequence`; `newest_sequence` is the newest sent so far. Losses of
  /// messages sent before the last decrease are that overrun's, not a new one.
  void on_loss(std::int64_t now_ns, std::uint64_t lost_sequence, std::uint64_t newest_sequence) noexcept;

  /// A receiver asked at `now_ns` for a message the history no longer holds
  /// (a GAP answers): it is a whole history behind, so the rate is halved at
  /// once, whatever the rules above (at most once per kIncreaseIntervalNs).
  void on_history_overrun(std::int64_t now_ns) noexcept;

  /// The current limit, kUnlimited when none.
  [[nodiscard]] double bytes_per_second() const noexcept { return rate_; }

 private:
  void maybe_increase(std::int64_t now_ns) noexcept;

  double rate_ = kUnlimited;
  double step_ = 0;     ///< Added per kIncreaseIntervalNs without loss: 1/32 of the rate before the last cut.
  double next_ns_ = 0;  ///< When the next byte may leave at rate_.
  std::int64_t last_decrease_ns_ = 0;
  std::int64_t last_overrun_ns_ = 0;
  std::uint64_t decreased_at_sequence_ = 0;  ///< Newest sequence sent at the last decrease.
  std::int64_t last_increase_ns_ = 0;
  std::int64_t last_sent_ns_ = 0;
  double average_rate_ = 0;  ///< Bytes per second sent lately.
};

}  // namespace axon::udp
