#include "transports/shm/take_clock.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <climits>

#include "src/base/clock.hpp"

namespace axon::shm {
#if defined(__x86_64__)
namespace {

__extension__ using U128 = unsigned __int128;  // rate arithmetic only, never the data path

/// The rate is re-measured from a new anchor after this long.
constexpr std::int64_t kRatePeriodNs = 1'000'000'000;

}  // namespace
#endif

bool TakeClock::counter_usable() noexcept {
#if defined(__x86_64__)
  static const bool kUsable = [] {
    unsigned eax = 0;
    unsigned ebx = 0;
    unsigned ecx = 0;
    unsigned edx = 0;
    return __get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) != 0 && (edx & (1U << 8)) != 0;
  }();
  return kUsable;
#else
  return false;
#endif
}

std::int64_t TakeClock::rebase() noexcept {
#if defined(__x86_64__)
  if (!counter_usable()) {
    return monotonic_now_ns();  // rebase_ticks_ stays 0: every call reads the monotonic clock
  }
  // The pair (clock, counter) of three reads with the fewest ticks around the
  // clock read: a preemption between the two would skew the anchor, and the
  // rate measured from it, by its length.
  std::int64_t ns = 0;
  std::uint64_t tsc = 0;
  std::uint64_t narrowest = UINT64_MAX;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::uint64_t before = __rdtsc();
    const std::int64_t now = monotonic_now_ns();
    const std::uint64_t after = __rdtsc();
    if (after - before < narrowest) {
      narrowest = after - before;
      ns = now;
      tsc = before + ((after - before) / 2);
    }
  }
  const std::int64_t rate_ns = ns - rate_ns_;
  if (rate_tsc_ == 0 || tsc <= rate_tsc_ || rate_ns <= 0) {
    // First call, or the counter went back (another core's): start over.
    rate_tsc_ = tsc;
    rate_ns_ = ns;
    rebase_ticks_ = 0;
    return ns;
  }
  if (rate_ns >= kCalibrateNs) {
    const auto ticks = static_cast<U128>(tsc - rate_tsc_);
    const auto q32 = static_cast<std::uint64_t>((static_cast<U128>(rate_ns) << 32) / ticks);
    // A rate far from the last one: the counter jumped (a VM migrated or
    // resumed). Measure again rather than extrapolate with it.
    const bool plausible = ns_per_tick_q32_ == 0 || (q32 < ns_per_tick_q32_ + (ns_per_tick_q32_ >> 4) &&
                                                     q32 > ns_per_tick_q32_ - (ns_per_tick_q32_ >> 4));
    if (!plausible || q32 == 0) {
      rate_tsc_ = tsc;
      rate_ns_ = ns;
      ns_per_tick_q32_ = 0;
      rebase_ticks_ = 0;
      return ns;
    }
    ns_per_tick_q32_ = q32;
    rebase_ticks_ = static_cast<std::uint64_t>((static_cast<U128>(kRebaseNs) << 32) / q32);
    if (rate_ns >= kRatePeriodNs) {
      rate_tsc_ = tsc;
      rate_ns_ = ns;
    }
  }
  anchor_tsc_ = tsc;
  anchor_ns_ = ns;
  return ns;
#else
  return monotonic_now_ns();
#endif
}

}  // namespace axon::shm
