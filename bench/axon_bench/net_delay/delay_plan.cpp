#include "net_delay/delay_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace axon_bench {
namespace {

/// A uniform double in [0, 1) from 53 bits (std::uniform_real_distribution is not the same everywhere).
double unit(std::mt19937_64& rng) noexcept { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

DelayPlan::DelayPlan(const DelayParams& params) noexcept : params_(params), rng_(params.seed) {}

std::int64_t DelayPlan::release_ns(std::int64_t arrival_ns) noexcept {
  if (params_.immediate_percent > 0 && unit(rng_) * 100 < params_.immediate_percent) {
    return arrival_ns;
  }
  double delay_ms = params_.delay_ms;
  if (params_.jitter_ms > 0) {
    delay_ms += params_.jitter_ms * (2 * unit(rng_) - 1);
  }
  return arrival_ns + std::llround(std::max(delay_ms, 0.0) * 1e6);
}

void HeldPackets::hold(std::uint32_t id, std::int64_t release_ns) {
  queue_.push({.id = id, .release_ns = release_ns, .arrival = arrivals_++});
}

void HeldPackets::take_due(std::int64_t now_ns, std::vector<std::uint32_t>& out) {
  while (!queue_.empty() && queue_.top().release_ns <= now_ns) {
    out.push_back(queue_.top().id);
    queue_.pop();
  }
}

void HeldPackets::take_all(std::vector<std::uint32_t>& out) { take_due(std::numeric_limits<std::int64_t>::max(), out); }

}  // namespace axon_bench
