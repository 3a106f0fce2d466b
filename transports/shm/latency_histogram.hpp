// The latency histogram a subscriber keeps in its statistics entry (docs/
// design/live-stats.md): log-scale buckets, two per power of two, in a ring
// of one-second windows; the writer (the taking thread) and the readers (any
// process, mapping the entry read-only) share nothing else.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "transports/shm/shm_constants.hpp"

namespace axon::shm {

/// Bucket 0: below 64 ns. Buckets 1..62: two per power of two from 2^6 ns
/// (64 ns) to 2^37 ns (137 s), [2^k, 1.5 * 2^k) then [1.5 * 2^k, 2^(k+1)), so
/// each bucket is at most 50 % wide. Bucket 63: 2^37 ns and more.
inline constexpr std::uint32_t kLatencyBuckets = 64;
inline constexpr std::uint32_t kLatencyFirstOctave = 6;
inline constexpr std::uint32_t kLatencyLastOctave = 36;
/// The windows of the ring: the current second and the ten before it.
inline constexpr std::uint32_t kLatencyWindows = 11;
inline constexpr std::int64_t kLatencyWindowNs = 1'000'000'000;
/// Of the messages of one publisher, take() measures the first published at
/// least this long after the last one it measured: every take while they are
/// published 10 us or more apart, at most 100,000 a second above that rate.
/// The choice depends on publish stamps only, never on the latency, so the
/// measured takes are an unbiased sample of the rest (docs/design/
/// live-stats.md, "The clock at take()").
inline constexpr std::int64_t kLatencyMeasureGapNs = 10'000;

/// The bucket of a latency of `ns` nanoseconds.
constexpr std::uint32_t latency_bucket(std::uint64_t ns) noexcept {
  if (ns < (std::uint64_t{1} << kLatencyFirstOctave)) {
    return 0;
  }
  const auto octave = static_cast<std::uint32_t>(63 - std::countl_zero(ns));
  if (octave > kLatencyLastOctave) {
    return kLatencyBuckets - 1;
  }
  const auto upper_half = static_cast<std::uint32_t>((ns >> (octave - 1)) & 1U);
  return 1 + (2 * (octave - kLatencyFirstOctave)) + upper_half;
}

/// The smallest latency of bucket `bucket` (< kLatencyBuckets).
constexpr std::uint64_t latency_bucket_lower_ns(std::uint32_t bucket) noexcept {
  if (bucket == 0) {
    return 0;
  }
  if (bucket >= kLatencyBuckets - 1) {
    return std::uint64_t{1} << (kLatencyLastOctave + 1);
  }
  const std::uint32_t octave = kLatencyFirstOctave + ((bucket - 1) / 2);
  return (std::uint64_t{1} << octave) + (((bucket - 1) % 2) * (std::uint64_t{1} << (octave - 1)));
}

/// The first latency past bucket `bucket` (its exclusive upper edge); the
/// last bucket has none (UINT64_MAX).
constexpr std::uint64_t latency_bucket_upper_ns(std::uint32_t bucket) noexcept {
  return bucket + 1 >= kLatencyBuckets ? UINT64_MAX : latency_bucket_lower_ns(bucket + 1);
}

static_assert(latency_bucket(63) == 0 && latency_bucket(64) == 1 && latency_bucket(95) == 1 &&
              latency_bucket(96) == 2 && latency_bucket(128) == 3);
static_assert(latency_bucket((std::uint64_t{1} << 37) - 1) == 62 && latency_bucket(std::uint64_t{1} << 37) == 63);
static_assert(latency_bucket_lower_ns(62) == (std::uint64_t{1} << 36) + (std::uint64_t{1} << 35));

/// One second of a subscriber's takes, in shared memory.
///
/// Memory ordering (a sequence lock whose sequence is `second`): the writer
/// reuses a window by storing second = 0 (relaxed), a release fence, the
/// zeroed counters (relaxed), then the new second (release). A reader loads
/// `second` (acquire), copies the counters (relaxed), issues an acquire
/// fence and loads `second` again: the same nonzero value both times means
/// the copy is of that second alone (a copy that saw a zeroing store sees
/// the 0 or a newer second in its second load). Within a second the writer
/// bumps the counters with relaxed load+store (single writer, no
/// read-modify-write); a reader may see a bucket bumped and `count` not yet,
/// so readers count the buckets and use `count` only as a hint.
struct alignas(kCacheLine) LatencyWindow {
  /// CLOCK_MONOTONIC second the window holds, plus one; 0: none (or being reset).
  std::atomic<std::uint64_t> second{0};
  std::atomic<std::uint64_t> count{0};
  std::atomic<std::uint64_t> sum_ns{0};
  std::atomic<std::uint64_t> max_ns{0};
  std::array<std::atomic<std::uint32_t>, kLatencyBuckets> buckets{};
};

struct LatencyWindows {
  std::array<LatencyWindow, kLatencyWindows> windows{};
};

static_assert(sizeof(LatencyWindow) == 320 && sizeof(LatencyWindows) == 3520, "update the docs' entry sizes");
static_assert(std::is_trivially_destructible_v<LatencyWindows> && std::atomic<std::uint64_t>::is_always_lock_free &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "shared-memory counters must be lock-free");

/// The writer's side, process-local: which window is current.
///
/// Thread safety: one thread (the subscriber's taking thread). record()
/// neither allocates, locks nor makes a system call.
class LatencyRecorder {
 public:
  LatencyRecorder() = default;
  explicit LatencyRecorder(LatencyWindows* windows) noexcept : windows_(windows) {}

  /// Counts a message published at `publish_ns` and taken at `now_ns`
  /// (both CLOCK_MONOTONIC); a take stamped before the publish counts as 0.
  void record(std::int64_t now_ns, std::int64_t publish_ns) noexcept {
    if (now_ns >= window_end_ns_) [[unlikely]] {
      rotate(now_ns);
    }
    const std::uint64_t latency = now_ns > publish_ns ? static_cast<std::uint64_t>(now_ns - publish_ns) : 0;
    LatencyWindow& w = *current_;
    // Relaxed load+store: this thread is the only writer (see LatencyWindow).
    std::atomic<std::uint32_t>& bucket = w.buckets[latency_bucket(latency)];
    bucket.store(bucket.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    w.count.store(w.count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    w.sum_ns.store(w.sum_ns.load(std::memory_order_relaxed) + latency, std::memory_order_relaxed);
    if (latency > w.max_ns.load(std::memory_order_relaxed)) {
      w.max_ns.store(latency, std::memory_order_relaxed);
    }
  }

 private:
  /// Makes the window of `now_ns`'s second current, reset unless it holds
  /// that second already. Once a second at most.
  void rotate(std::int64_t now_ns) noexcept;

  LatencyWindows* windows_ = nullptr;
  LatencyWindow* current_ = nullptr;
  std::int64_t window_end_ns_ = 0;  ///< The current window's second ends here.
};

/// What readers make of the windows: percentiles over the windows of the
/// last kLatencyWindows seconds. A percentile is the upper edge of the
/// bucket that holds it (nearest rank), at most `max_ns`: at most 50 % above
/// the true value, never below it.
struct LatencySummary {
  std::uint64_t count = 0;  ///< Measured takes in the windows read (kLatencyMeasureGapNs).
  std::uint64_t p50_ns = 0;
  std::uint64_t p90_ns = 0;
  std::uint64_t p99_ns = 0;
  std::uint64_t p999_ns = 0;
  std::uint64_t max_ns = 0;
  std::uint64_t mean_ns = 0;
  std::uint32_t windows = 0;       ///< Seconds with takes that were read.
  std::uint32_t torn_windows = 0;  ///< Windows reused while read, twice: left out.
  std::array<std::uint64_t, kLatencyBuckets> buckets{};
};

/// Sums the windows of `windows` whose second lies in the kLatencyWindows
/// seconds up to `now_ns` (CLOCK_MONOTONIC, the reader's clock) and computes
/// the percentiles. Reads only; safe on a read-only mapping another process
/// writes.
LatencySummary summarize_latency(const LatencyWindows& windows, std::int64_t now_ns) noexcept;

/// The upper edge of the bucket that holds the `rank`-th smallest of the
/// latencies counted in `buckets` (1-based), capped at `max_ns`.
std::uint64_t latency_at_rank(const std::array<std::uint64_t, kLatencyBuckets>& buckets, std::uint64_t rank,
                              std::uint64_t max_ns) noexcept;

}  // namespace axon::shm
