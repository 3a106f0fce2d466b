// The processes of a throughput case. Internal to throughput_cases.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "harness/endpoint_calls.hpp"
#include "harness/payload.hpp"
#include "harness/wait.hpp"
#include "harness/worker_setup.hpp"
#include "throughput/throughput_cases.hpp"
#include <axon/axon.hpp>

namespace axon_bench::workers {

inline constexpr std::string_view kFanoutTopic = "axon_bench/fanout";
/// Chunks the publisher may have in flight beyond the queue depth: one held
/// by each subscriber's take(), one loan.
inline constexpr std::uint32_t kFanoutExtraChunks = 4;

template <class R>
int fanout_fail_with(FanoutControl& control, std::size_t process, std::string_view what, const R& result) {
  return control.report[process].error.set(std::string(what) + ": " + std::string(result.error().message()));
}

/// Every process connected before any leaves.
inline void fanout_barrier(FanoutControl& control, const ThroughputCase& c) noexcept {
  control.start.arrive_and_wait(c.subscribers + 1);
}

/// The publisher's node and topic: its pool holds every queue's depth and a few more.
inline WorkerSpec fanout_publisher_spec(const ThroughputCase& c) {
  return {.node = "bench_fanout_pub",
          .options = node_in_domain(c.domain_id, {{.payload_bytes = static_cast<std::uint32_t>(c.payload_bytes),
                                                   .count = c.depth + kFanoutExtraChunks}}),
          .publishes = kFanoutTopic,
          .subscribes = "",
          .qos = {},
          .subscribers = c.subscribers};
}

/// Subscriber `subscriber`'s node and topic: lossless, the publisher blocks.
inline WorkerSpec fanout_subscriber_spec(const ThroughputCase& c, std::size_t subscriber) {
  return {.node = "bench_fanout_sub" + std::to_string(subscriber),
          .options = node_in_domain(c.domain_id, {{.payload_bytes = 256, .count = 4}}),
          .publishes = "",
          .subscribes = kFanoutTopic,
          .qos =
              axon::SubscriberQos{
                  .depth = c.depth, .overflow = axon::Overflow::kBlockPublisher, .block_timeout_ns = 30'000'000'000},
          .subscribers = 1};
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

/// Subscriber: whether it has every message the publisher sent.
inline bool fanout_complete(const FanoutControl& control, std::uint64_t next) noexcept {
  // Acquire pairs with the publisher's release store of `total`.
  const std::uint64_t total = control.total.load(std::memory_order_acquire);
  return total != 0 && next >= total;
}

/// Subscriber: it is through with the publisher's chunks.
inline void fanout_leave(FanoutControl& control) noexcept {
  control.finished.fetch_add(1, std::memory_order_acq_rel);  // pairs with the publisher's acquire
}

template <class T>
int fanout_publisher(const ThroughputCase& c, FanoutControl& control) {
  constexpr std::size_t kSelf = 0;
  auto ends = set_up_worker<T>(fanout_publisher_spec(c));
  if (!ends) {
    return control.report[kSelf].error.set(ends.error().message());
  }
  fanout_barrier(control, c);
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
    auto status = publish_stamped(*ends->pub, Stamp{.index = i, .time_ns = 0}, c.touch);
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
  auto ends = set_up_worker<T>(fanout_subscriber_spec(c, subscriber));
  if (!ends) {
    return control.report[self].error.set(ends.error().message());
  }
  fanout_barrier(control, c);
  FanoutReport& report = control.report[self];
  PollingIdle idle(c.wait);
  std::uint64_t next = 0;  // index expected next
  std::uint64_t checksum = 0;
  for (;;) {
    auto took = try_take(*ends->sub, [&](const axon::Sample<T>& sample) {
      const std::uint64_t index = read_stamp(sample->data).index;
      if (c.touch) {
        checksum += read_payload(sample->data, sizeof(T));
      }
      count_fanout_message(c, report, next, index);
    });
    if (!took) {
      return fanout_fail_with(control, self, "take", took);
    }
    if (*took == Took::kSample) {
      idle.found();
      continue;
    }
    if (fanout_complete(control, next)) {
      break;
    }
    idle.idle();
  }
  report.measure_end = CpuTimes::now();
  keep(checksum);
  fanout_leave(control);
  return 0;
}

}  // namespace axon_bench::workers
