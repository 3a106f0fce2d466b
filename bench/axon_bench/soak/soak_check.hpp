// The soak's verdicts: whether a series sampled over a long run stays flat
// after its warm-up, by the bounds docs/reliability.md ("Soak") states and
// justifies. Pure functions of the samples, so tests feed them synthetic
// series (flat, leaking, noisy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace axon_bench {

/// The bounds of the checks; the defaults are the documented ones.
struct SoakBounds {
  double warmup_s = 60;     ///< Samples before this are not judged.
  double reference_s = 60;  ///< The first window after the warm-up: the level the rest is held to.
  /// Memory: the least-squares slope after the warm-up may not exceed this, or what a growth of
  /// `memory_growth_floor_kib` over the judged span would give if that is more (a short run).
  double memory_slope_kib_per_min = 32;
  /// Memory: mean of the last tenth minus mean of the first tenth of the judged samples may not exceed
  /// this, or `memory_growth_fraction` of the warm-up level if that is more.
  double memory_growth_floor_kib = 512;
  double memory_growth_fraction = 0.01;
  /// Latency: a topic's p99 in the last two windows (the lower) may be at most this times its p99 in the first window
  /// after the warm-up, or `latency_floor_ns` above it (a subscriber that waits for a core held by another
  /// process: scheduling noise, not drift).
  double latency_p99_ratio = 2;
  double latency_floor_ns = 500'000;
  /// Latency: a window's p99 is judged only from this many messages up (below, it is one of the few
  /// slowest messages: a topic of 10 Hz in 10 s windows); all topics together are judged too.
  std::uint64_t latency_min_messages = 1000;
};

/// A least-squares line through (t, v).
struct LineFit {
  double slope = 0;  ///< Units of v per unit of t.
  double intercept = 0;
  std::size_t samples = 0;
};

/// Fits the points with a finite value (NaN marks a missing sample). Fewer
/// than two points, or all at one time, give a zero slope.
LineFit fit_line(std::span<const double> t, std::span<const double> v);

/// A verdict and the figures it was made on, in words ("slope 1.2 KiB/min (bound 32) ...").
struct SoakVerdict {
  bool pass = false;
  /// False: too little to judge (figures say why); such a verdict passes and is shown as not judged.
  bool judged = true;
  std::string figures;
};

/// How a series is judged.
enum class SoakRule {
  kMemory,  ///< Slope and growth within bounds (RSS, KiB).
  /// The last window's minimum at most the reference window's (fds, threads, mappings, registry slots): the
  /// level below the transients (a descriptor open while a reader asks for a pool) does not rise.
  kNoGrowth,
  kNoLoss,  ///< The last window's maximum at least the reference window's (free pool chunks).
};

/// Judges samples `v` taken at times `t` (seconds from the measured start).
/// A series with no sample after the reference window fails ("run too short").
SoakVerdict judge_series(SoakRule rule, std::span<const double> t, std::span<const double> v, const SoakBounds& bounds);

/// Judges a topic's p99 per window (ns; NaN: no message in that window),
/// window w covering [w * window_s, (w + 1) * window_s): the lower p99 of
/// the last two windows (the last alone when only the reference precedes
/// it) against the first that starts at or after the warm-up; a drift
/// persists, one window's noise does not. `messages`: per window; fewer than
/// bounds.latency_min_messages in any window compared leaves the topic not
/// judged.
SoakVerdict judge_latency(std::span<const double> p99_ns, std::span<const std::uint64_t> messages, double window_s,
                          const SoakBounds& bounds);

}  // namespace axon_bench
