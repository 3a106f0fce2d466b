#include "transports/udp/send_pacer.hpp"

#include <algorithm>
#include <cmath>

namespace axon::udp {
namespace {

constexpr double kNsPerSecond = 1e9;
/// On loss the rate is cut to this fraction (CUBIC's; halving, as Reno does,
/// reacts too much to the spurious NACKs of a receiver that is only late).
constexpr double kDecrease = 0.75;
/// The send rate is averaged over about this long.
constexpr double kAverageNs = 100e6;

}  // namespace

std::int64_t SendPacer::delay_ns(std::int64_t now_ns) noexcept {
  maybe_increase(now_ns);
  if (rate_ == kUnlimited) {
    return 0;
  }
  const double wait = next_ns_ - static_cast<double>(now_ns);
  return wait > 0 ? static_cast<std::int64_t>(wait) : 0;
}

void SendPacer::sent(std::int64_t now_ns, std::size_t bytes) noexcept {
  // A leaky integral: about the bytes of the last kAverageNs, per second.
  const double elapsed = static_cast<double>(std::max<std::int64_t>(now_ns - last_sent_ns_, 0));
  average_rate_ =
      average_rate_ * std::exp(-elapsed / kAverageNs) + static_cast<double>(bytes) * kNsPerSecond / kAverageNs;
  last_sent_ns_ = now_ns;
  if (rate_ != kUnlimited) {
    // Credit for a pause is kept up to kBurstBytes, no more.
    const double earliest = static_cast<double>(now_ns) - kBurstBytes * kNsPerSecond / rate_;
    next_ns_ = std::max(next_ns_, earliest) + static_cast<double>(bytes) * kNsPerSecond / rate_;
  }
}

void SendPacer::on_loss(std::int64_t now_ns, std::uint64_t lost_sequence, std::uint64_t newest_sequence) noexcept {
  if (lost_sequence <= decreased_at_sequence_ ||
      (last_decrease_ns_ != 0 && now_ns - last_decrease_ns_ < kDecreaseIntervalNs)) {
    return;  // the same overrun, reported by several NACKs
  }
  decreased_at_sequence_ = newest_sequence;
  // Unpaced, the rate of the last kAverageNs (not of the last burst: the
  // receiver's socket buffer absorbs bursts, what overran it is the average).
  const double base = rate_ == kUnlimited ? average_rate_ : rate_;
  // The first cut halves: unpaced, the writer sends as fast as its CPU
  // allows, likely far above what overran the receiver.
  rate_ = std::max(kMinBytesPerSecond, base * (rate_ == kUnlimited ? 0.5 : kDecrease));
  step_ = base / 32;
  last_decrease_ns_ = now_ns;
  last_increase_ns_ = now_ns;
  next_ns_ = std::max(next_ns_, static_cast<double>(now_ns));
}

void SendPacer::on_history_overrun(std::int64_t now_ns) noexcept {
  if (now_ns - last_overrun_ns_ < kIncreaseIntervalNs) {
    return;  // the GAPs of one NACK, or of one round
  }
  last_overrun_ns_ = now_ns;
  const double base = rate_ == kUnlimited ? average_rate_ : rate_;
  rate_ = std::max(kMinBytesPerSecond, base / 2);
  step_ = rate_ / 32;
  last_decrease_ns_ = now_ns;
  last_increase_ns_ = now_ns;
  next_ns_ = std::max(next_ns_, static_cast<double>(now_ns));
}

void SendPacer::maybe_increase(std::int64_t now_ns) noexcept {
  if (rate_ == kUnlimited || now_ns - last_increase_ns_ < kIncreaseIntervalNs) {
    return;
  }
  // Additive: back to the rate before the last decrease in a few intervals,
  // then on at the same pace, probing for more.
  const std::int64_t steps = (now_ns - last_increase_ns_) / kIncreaseIntervalNs;
  // Never far above what the writer sends: a limit it does not reach would
  // grow unchecked meanwhile, and the next overrun would take many cuts.
  const double ceiling = std::max(2 * average_rate_, kMinBytesPerSecond);
  rate_ = std::min(rate_ + static_cast<double>(steps) * step_, std::max(rate_, ceiling));
  last_increase_ns_ += steps * kIncreaseIntervalNs;
}

}  // namespace axon::udp
