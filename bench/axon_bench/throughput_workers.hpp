// The processes of a throughput case. Internal to throughput_cases.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>

#include "payload.hpp"
#include "throughput_cases.hpp"
#include "worker_support.hpp"
#include <axon/axon.hpp>

namespace axon_bench::workers {

inline constexpr std::string_view kFanoutTopic = "axon_bench/fanout";
/// Chunks the publisher may have in flight beyond the queue depth: one held
/// by each subscriber's take(), one loan.
inline constexpr std::uint32_t kFanoutExtraChunks = 4;

inline int fanout_fail(FanoutControl& control, std::size_t process, std::string_view message) noexcept {
  char* out = control.report[process].error;
  const std::size_t n = std::min(message.size(), sizeof(FanoutReport::error) - 1);
  std::memcpy(out, message.data(), n);
  out[n] = '\0';
  return 1;
}

template <class R>
int fanout_fail_with(FanoutControl& control, std::size_t process, std::string_view what, const R& result) {
  return fanout_fail(control, process, std::string(what) + ": " + std::string(result.error().message()));
}

inline void fanout_barrier(FanoutControl& control, std::uint32_t processes, const WaitPolicy& wait) noexcept {
  // acq_rel/acquire: every process connected before any leaves the barrier.
  control.arrived.fetch_add(1, std::memory_order_acq_rel);
  while (control.arrived.load(std::memory_order_acquire) < processes) {
    wait.strategy == WaitStrategy::kBusyPoll ? cpu_relax() : std::this_thread::yield();
  }
}

/// A subscriber counts message `index` (gaps as lost, warm-up not at all).
inline void count_fanout_message(const ThroughputCase& c, FanoutReport& report, std::uint64_t& next,
                                 std::uint64_t index) noexcept {
  if (index > next) {
    report.lost += index - next;  // should not happen: the publisher blocks instead
  }
  next = index + 1;
  if (index >= c.warmup) {
    const std::int64_t now = now_ns();
    if (report.received == 0) {
      report.measure_begin = CpuTimes::now();
      report.first_ns = now;
    }
    ++report.received;
    report.last_ns = now;
  }
}

template <class T>
int fanout_publisher(const ThroughputCase& c, FanoutControl& control) {
  constexpr std::size_t kSelf = 0;
  axon::NodeOptions options;
  options.domain_id = c.domain_id;
  options.chunk_classes = std::vector<axon::ChunkClassConfig>{
      {.payload_bytes = static_cast<std::uint32_t>(sizeof(T)), .count = c.depth + kFanoutExtraChunks}};
  auto node = axon::Node::create("bench_fanout_pub", options);
  if (!node) {
    return fanout_fail_with(control, kSelf, "Node::create", node);
  }
  auto pub = (*node)->advertise<T>(kFanoutTopic);
  if (!pub) {
    return fanout_fail_with(control, kSelf, "advertise", pub);
  }
  if (!wait_until([&] { return (*pub)->subscriber_count() >= c.subscribers; })) {
    return fanout_fail(control, kSelf, "not every subscriber connected within 10 s");
  }
  fanout_barrier(control, c.subscribers + 1, c.wait);
  FanoutReport& report = control.report[kSelf];
  const auto duration_ns = static_cast<std::int64_t>(c.duration_s * 1e9);
  std::int64_t begin_ns = 0;
  std::uint64_t i = 0;
  for (;; ++i) {
    if (i == c.warmup) {
      report.measure_begin = CpuTimes::now();
      begin_ns = report.measure_begin.wall_ns;
    }
    if (i >= c.warmup && (i & 15) == 0) {
      const std::int64_t elapsed = now_ns() - begin_ns;
      if (elapsed >= duration_ns) {
        break;
      }
      control.progress_ms.store(static_cast<std::uint64_t>(elapsed / 1'000'000), std::memory_order_relaxed);
    }
    auto loan = loan_waiting(**pub);
    if (!loan) {
      return fanout_fail_with(control, kSelf, "loan", loan);
    }
    if (c.touch) {
      fill_payload(loan->data, sizeof(T), i);
    }
    write_stamp(loan->data, Stamp{.index = i, .time_ns = 0});
    auto status = (*pub)->publish(std::move(*loan));
    if (!status) {
      return fanout_fail_with(control, kSelf, "publish", status);
    }
    report.lost += status->dropped;  // only when a subscriber blocked us for longer than its timeout
  }
  report.measure_end = CpuTimes::now();
  // Release pairs with the subscribers' acquire: every message is published.
  control.total.store(i, std::memory_order_release);
  // Our pool holds the chunks the subscribers still read; the parent's
  // timeout bounds this wait.
  while (control.finished.load(std::memory_order_acquire) < c.subscribers) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return 0;
}

template <class T>
int fanout_subscriber(const ThroughputCase& c, FanoutControl& control, std::size_t subscriber) {
  const std::size_t self = 1 + subscriber;
  axon::NodeOptions options;
  options.domain_id = c.domain_id;
  options.chunk_classes = std::vector<axon::ChunkClassConfig>{{.payload_bytes = 256, .count = 4}};
  auto node = axon::Node::create("bench_fanout_sub" + std::to_string(subscriber), options);
  if (!node) {
    return fanout_fail_with(control, self, "Node::create", node);
  }
  auto sub = (*node)->subscribe<T>(
      kFanoutTopic,
      {.depth = c.depth, .overflow = axon::Overflow::kBlockPublisher, .block_timeout_ns = 30'000'000'000});
  if (!sub) {
    return fanout_fail_with(control, self, "subscribe", sub);
  }
  if (!wait_until([&] { return (*sub)->publisher_count() >= 1; })) {
    return fanout_fail(control, self, "no publisher connected within 10 s");
  }
  fanout_barrier(control, c.subscribers + 1, c.wait);
  FanoutReport& report = control.report[self];
  std::uint64_t next = 0;  // index expected next
  std::uint64_t checksum = 0;
  for (;;) {
    auto sample = (*sub)->take();
    if (!sample) {
      if (sample.failed()) {
        return fanout_fail_with(control, self, "take", sample);
      }
      // Acquire pairs with the publisher's release store of `total`.
      const std::uint64_t total = control.total.load(std::memory_order_acquire);
      if (total != 0 && next >= total) {
        break;
      }
      c.wait.idle();
      continue;
    }
    const std::uint64_t index = read_stamp(sample->data).index;
    if (c.touch) {
      checksum += read_payload(sample->data, sizeof(T));
    }
    count_fanout_message(c, report, next, index);
  }
  report.measure_end = CpuTimes::now();
  keep(checksum);
  // Release pairs with the publisher's acquire: we are done with its chunks.
  control.finished.fetch_add(1, std::memory_order_acq_rel);
  return 0;
}

}  // namespace axon_bench::workers
