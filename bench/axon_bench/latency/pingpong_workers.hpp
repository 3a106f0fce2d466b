// The two workers of a ping-pong latency case: the ping side records round
// trips, the pong side answers each ping. Internal to latency_cases.cpp.
#pragma once

#include <cstdint>

#include "harness/pair_runner.hpp"
#include "harness/payload.hpp"
#include "harness/worker_support.hpp"
#include <axon/axon.hpp>

namespace axon_bench::workers {

/// Worker 0 of a ping-pong case: sends ping i, waits for pong i, records
/// the round trip.
template <class T>
int ping_side(const LatencyCase& c, PairControl& control, SharedArray<std::int64_t>& round_trips) {
  constexpr int kSide = 0;
  auto node = axon::Node::create("bench_ping", node_options(c, true));
  if (!node) {
    return fail_with(control, kSide, "Node::create", node);
  }
  auto pub = (*node)->advertise<T>(kPingTopic);
  if (!pub) {
    return fail_with(control, kSide, "advertise", pub);
  }
  auto sub = (*node)->subscribe<T>(kPongTopic, {.depth = depth_for(c.payload_bytes)});
  if (!sub) {
    return fail_with(control, kSide, "subscribe", sub);
  }
  if (!wait_until([&] { return (*pub)->subscriber_count() >= 1 && (*sub)->publisher_count() >= 1; })) {
    return fail(control, kSide, "the pong side did not connect within 10 s");
  }
  arrive_and_wait(control);
  SideReport& report = control.side[kSide];
  const std::uint64_t total = c.warmup + c.samples;
  const std::int64_t period = period_ns(c);
  std::int64_t scheduled_ns = now_ns();
  std::uint64_t checksum = 0;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == c.warmup) {
      report.measure_begin = CpuTimes::now();
    }
    std::int64_t start_ns = 0;
    if (period == 0) {
      start_ns = now_ns();
    } else {
      scheduled_ns += period;
      while (now_ns() < scheduled_ns) {
        cpu_relax();
      }
      start_ns = scheduled_ns;
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
    if (status->delivered != 1) {
      return fail(control, kSide, "the pong side's queue was full with one message in flight");
    }
    auto pong = take_spinning(**sub);
    if (!pong) {
      return fail_with(control, kSide, "take", pong);
    }
    const std::int64_t end_ns = now_ns();
    if (c.touch) {
      checksum += read_payload(pong->data, sizeof(T));
    }
    if (read_stamp(pong->data).index != i) {
      return fail(control, kSide, "a pong answered another ping");
    }
    if (i >= c.warmup) {
      const std::uint64_t k = i - c.warmup;
      round_trips[k] = end_ns - start_ns;
      if ((k & 1023) == 0) {
        control.progress.store(k, std::memory_order_relaxed);  // display only
      }
    }
  }
  report.measure_end = CpuTimes::now();
  keep(checksum);
  wait_for_finished(control);
  return 0;
}

/// Worker 1 of a ping-pong case: answers each ping with a pong of the same
/// size and stamp.
template <class T>
int pong_side(const LatencyCase& c, PairControl& control) {
  constexpr int kSide = 1;
  auto node = axon::Node::create("bench_pong", node_options(c, true));
  if (!node) {
    return fail_with(control, kSide, "Node::create", node);
  }
  auto sub = (*node)->subscribe<T>(kPingTopic, {.depth = depth_for(c.payload_bytes)});
  if (!sub) {
    return fail_with(control, kSide, "subscribe", sub);
  }
  auto pub = (*node)->advertise<T>(kPongTopic);
  if (!pub) {
    return fail_with(control, kSide, "advertise", pub);
  }
  if (!wait_until([&] { return (*pub)->subscriber_count() >= 1 && (*sub)->publisher_count() >= 1; })) {
    return fail(control, kSide, "the ping side did not connect within 10 s");
  }
  arrive_and_wait(control);
  SideReport& report = control.side[kSide];
  const std::uint64_t total = c.warmup + c.samples;
  std::uint64_t checksum = 0;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == c.warmup) {
      report.measure_begin = CpuTimes::now();
    }
    auto ping = take_spinning(**sub);
    if (!ping) {
      return fail_with(control, kSide, "take", ping);
    }
    if (c.touch) {
      checksum += read_payload(ping->data, sizeof(T));
    }
    auto loan = loan_waiting(**pub);
    if (!loan) {
      return fail_with(control, kSide, "loan", loan);
    }
    if (c.touch) {
      fill_payload(loan->data, sizeof(T), i);
    }
    write_stamp(loan->data, read_stamp(ping->data));
    auto status = (*pub)->publish(std::move(*loan));
    if (!status) {
      return fail_with(control, kSide, "publish", status);
    }
    if (status->delivered != 1) {
      return fail(control, kSide, "the ping side's queue was full with one message in flight");
    }
  }  // each ping goes back to its pool once its pong is out
  report.measure_end = CpuTimes::now();
  keep(checksum);
  control.ack.store(kFinished, std::memory_order_release);  // pairs with wait_for_finished()
  return 0;
}

}  // namespace axon_bench::workers
