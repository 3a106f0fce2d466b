// The two workers of a one-way latency case: a publisher that sends one
// message at a time (or on a schedule) and a subscriber that records one
// latency per message. Internal to latency_cases.cpp.
#pragma once

#include <algorithm>
#include <cstdint>

#include "pair_runner.hpp"
#include "payload.hpp"
#include "worker_support.hpp"
#include <axon/axon.hpp>

namespace axon_bench::workers {

/// Worker 0 of a one-way case.
template <class T>
int oneway_publisher(const LatencyCase& c, PairControl& control) {
  constexpr int kSide = 0;
  auto node = axon::Node::create("bench_pub", node_options(c, true));
  if (!node) {
    return fail_with(control, kSide, "Node::create", node);
  }
  auto pub = (*node)->advertise<T>(kOneWayTopic);
  if (!pub) {
    return fail_with(control, kSide, "advertise", pub);
  }
  if (!wait_until([&] { return (*pub)->subscriber_count() >= 1; })) {
    return fail(control, kSide, "no subscriber connected within 10 s");
  }
  arrive_and_wait(control);
  SideReport& report = control.side[kSide];
  const std::uint64_t total = c.warmup + c.samples;
  const std::int64_t period = period_ns(c);
  std::int64_t scheduled_ns = now_ns();
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == c.warmup) {
      report.measure_begin = CpuTimes::now();
    }
    std::int64_t start_ns = 0;
    if (period == 0) {
      // One message in flight: wait until the subscriber handled the last.
      // Acquire pairs with the subscriber's release store of `ack`.
      while (control.ack.load(std::memory_order_acquire) < i) {
        cpu_relax();
      }
      start_ns = now_ns();
    } else {
      scheduled_ns += period;
      while (now_ns() < scheduled_ns) {
        cpu_relax();
      }
      start_ns = scheduled_ns;  // a late send counts from when it was due (no coordinated omission)
    }
    auto loan = loan_waiting(**pub);
    if (!loan) {
      return fail_with(control, kSide, "loan", loan);
    }
    if (c.touch) {
      fill_payload(loan->data, sizeof(T), i);
    }
    write_stamp(loan->data, Stamp{.index = i, .time_ns = start_ns});
    auto status = (*pub)->publish(std::move(*loan));
    if (!status) {
      return fail_with(control, kSide, "publish", status);
    }
    if (status->dropped != 0) {
      if (period == 0) {
        return fail(control, kSide, "the subscriber's queue was full with one message in flight");
      }
      ++report.dropped;
    }
  }
  report.measure_end = CpuTimes::now();
  control.done.store(1, std::memory_order_release);  // pairs with the subscriber's acquire: all was published
  wait_for_finished(control);                        // our pool holds what the subscriber still reads
  return 0;
}

/// Worker 1 of a one-way case: records one latency per message.
template <class T>
int oneway_subscriber(const LatencyCase& c, PairControl& control, SharedArray<std::int64_t>& latencies) {
  constexpr int kSide = 1;
  auto node = axon::Node::create("bench_sub", node_options(c, false));
  if (!node) {
    return fail_with(control, kSide, "Node::create", node);
  }
  auto sub = (*node)->subscribe<T>(kOneWayTopic, {.depth = depth_for(c.payload_bytes)});
  if (!sub) {
    return fail_with(control, kSide, "subscribe", sub);
  }
  if (!wait_until([&] { return (*sub)->publisher_count() >= 1; })) {
    return fail(control, kSide, "no publisher connected within 10 s");
  }
  std::fill(latencies.data(), latencies.data() + latencies.size(), kMissing);
  arrive_and_wait(control);
  SideReport& report = control.side[kSide];
  const std::uint64_t total = c.warmup + c.samples;
  const bool from_stamp = c.rate_hz > 0 || c.start_at == StartStamp::kLoan;
  std::uint64_t recorded = 0;
  std::uint64_t checksum = 0;
  bool done_seen = false;
  for (;;) {
    std::uint64_t index = 0;
    {
      auto sample = (*sub)->take();
      if (!sample) {
        if (sample.failed()) {
          return fail_with(control, kSide, "take", sample);
        }
        if (done_seen) {
          break;  // taken after seeing `done`: nothing more will come
        }
        // Acquire pairs with the publisher's release store of `done`.
        done_seen = control.done.load(std::memory_order_acquire) != 0;
        cpu_relax();
        continue;
      }
      // Received = the subscriber holds the sample (what the latency target
      // measures: publish -> take). The message's index then comes from its
      // sequence number; only with --rate, --start-at loan or --touch does it
      // read the payload (the stamp, or every byte) before the clock, so the
      // payload's own cache-line transfers count.
      std::int64_t received_ns = 0;
      std::int64_t start_ns = 0;
      if (from_stamp || c.touch) {
        const Stamp stamp = read_stamp(sample->data);
        if (c.touch) {
          checksum += read_payload(sample->data, sizeof(T));
        }
        received_ns = now_ns();
        start_ns = from_stamp ? stamp.time_ns : (*sample).info().publish_time_ns;
        index = stamp.index;
      } else {
        received_ns = now_ns();
        start_ns = (*sample).info().publish_time_ns;
        index = (*sample).info().sequence - 1;  // the publisher sends index i as its (i+1)-th message
      }
      if (index >= c.warmup && index < total) {
        if (recorded == 0) {
          report.measure_begin = CpuTimes::now();
        }
        latencies[index - c.warmup] = received_ns - start_ns;
        if ((++recorded & 1023) == 0) {
          control.progress.store(recorded, std::memory_order_relaxed);  // display only
        }
      }
    }  // the sample goes back to the publisher's pool here
    // Release pairs with the publisher's acquire: the chunk is free again.
    control.ack.store(index + 1, std::memory_order_release);
    if (index + 1 >= total) {
      break;
    }
  }
  report.measure_end = CpuTimes::now();
  keep(checksum);
  control.ack.store(kFinished, std::memory_order_release);  // pairs with wait_for_finished()
  return 0;
}

}  // namespace axon_bench::workers
