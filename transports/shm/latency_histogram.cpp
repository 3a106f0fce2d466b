#include "transports/shm/latency_histogram.hpp"

#include <algorithm>

namespace axon::shm {

void LatencyRecorder::rotate(std::int64_t now_ns) noexcept {
  const std::int64_t second = now_ns / kLatencyWindowNs;
  const auto stamp = static_cast<std::uint64_t>(second) + 1;
  LatencyWindow& w = windows_->windows[static_cast<std::uint64_t>(second) % kLatencyWindows];
  window_end_ns_ = (second + 1) * kLatencyWindowNs;
  current_ = &w;
  // Relaxed: only this thread writes `second`.
  if (w.second.load(std::memory_order_relaxed) == stamp) {
    return;  // the window of this second already (the recorder was made in it)
  }
  w.second.store(0, std::memory_order_relaxed);
  // Release fence: a reader whose copy sees one of the zeroing stores below
  // sees second == 0 (or the new second) when it loads it again.
  std::atomic_thread_fence(std::memory_order_release);
  w.count.store(0, std::memory_order_relaxed);
  w.sum_ns.store(0, std::memory_order_relaxed);
  w.max_ns.store(0, std::memory_order_relaxed);
  for (std::atomic<std::uint32_t>& bucket : w.buckets) {
    bucket.store(0, std::memory_order_relaxed);
  }
  // Release pairs with the reader's acquire load of `second`.
  w.second.store(stamp, std::memory_order_release);
}

std::uint64_t latency_at_rank(const std::array<std::uint64_t, kLatencyBuckets>& buckets, std::uint64_t rank,
                              std::uint64_t max_ns) noexcept {
  std::uint64_t seen = 0;
  for (std::uint32_t b = 0; b < kLatencyBuckets; ++b) {
    seen += buckets[b];
    if (seen >= rank && buckets[b] != 0) {
      return std::min(latency_bucket_upper_ns(b), max_ns);
    }
  }
  return max_ns;
}

namespace {

/// One consistent copy of `w` into `out` (added), or false when it was reused
/// while copied.
bool add_window(const LatencyWindow& w, std::uint64_t stamp, LatencySummary& out, std::uint64_t& sum_ns) noexcept {
  std::array<std::uint64_t, kLatencyBuckets> copy{};
  for (std::uint32_t b = 0; b < kLatencyBuckets; ++b) {
    copy[b] = w.buckets[b].load(std::memory_order_relaxed);  // ordered by the fence below
  }
  const std::uint64_t max = w.max_ns.load(std::memory_order_relaxed);
  const std::uint64_t sum = w.sum_ns.load(std::memory_order_relaxed);
  // Acquire fence: pairs with the writer's release fence in rotate(); see LatencyWindow.
  std::atomic_thread_fence(std::memory_order_acquire);
  if (w.second.load(std::memory_order_relaxed) != stamp) {
    return false;
  }
  std::uint64_t count = 0;
  for (std::uint32_t b = 0; b < kLatencyBuckets; ++b) {
    out.buckets[b] += copy[b];
    count += copy[b];
  }
  if (count != 0) {
    out.count += count;
    out.max_ns = std::max(out.max_ns, max);
    sum_ns += sum;
    ++out.windows;
  }
  return true;
}

}  // namespace

LatencySummary summarize_latency(const LatencyWindows& windows, std::int64_t now_ns) noexcept {
  LatencySummary out;
  // The writer's clock may be a little ahead of ours: its next second counts too.
  const auto now_second = static_cast<std::uint64_t>(std::max<std::int64_t>(now_ns, 0) / kLatencyWindowNs);
  const std::uint64_t newest = now_second + 2;  // stamps are second + 1
  const std::uint64_t oldest = now_second + 1 >= kLatencyWindows ? now_second + 2 - kLatencyWindows : 1;
  std::uint64_t sum_ns = 0;
  for (const LatencyWindow& w : windows.windows) {
    bool copied = false;
    for (int attempt = 0; attempt < 2 && !copied; ++attempt) {
      // Acquire pairs with the writer's release store of `second` in rotate().
      const std::uint64_t stamp = w.second.load(std::memory_order_acquire);
      if (stamp < oldest || stamp > newest) {
        copied = true;  // empty, being reset, or out of the window: nothing to add
        break;
      }
      copied = add_window(w, stamp, out, sum_ns);
    }
    out.torn_windows += copied ? 0 : 1;
  }
  // A max the writer had not stored yet when we copied its bucket: the
  // bucket's upper edge bounds it.
  for (std::uint32_t b = kLatencyBuckets; b-- > 0;) {
    if (out.buckets[b] != 0) {
      out.max_ns = std::max(out.max_ns, latency_bucket_lower_ns(b));
      break;
    }
  }
  if (out.count == 0) {
    return out;
  }
  out.mean_ns = sum_ns / out.count;
  auto rank = [&](std::uint64_t per_mille) { return std::max<std::uint64_t>(1, (out.count * per_mille + 999) / 1000); };
  out.p50_ns = latency_at_rank(out.buckets, rank(500), out.max_ns);
  out.p90_ns = latency_at_rank(out.buckets, rank(900), out.max_ns);
  out.p99_ns = latency_at_rank(out.buckets, rank(990), out.max_ns);
  // p99.9: ceil(count * 999 / 1000) as above.
  out.p999_ns = latency_at_rank(out.buckets, rank(999), out.max_ns);
  return out;
}

}  // namespace axon::shm
