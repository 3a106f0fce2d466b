// The two workers of a ping-pong latency case: the ping side records round
// trips, the pong side answers each ping. Internal to latency_cases.cpp.
#pragma once

#include <cstdint>

#include "harness/endpoint_calls.hpp"
#include "harness/pair_worker.hpp"
#include "harness/payload.hpp"
#include "harness/worker_setup.hpp"
#include "latency/latency_workers.hpp"
#include <axon/axon.hpp>

namespace axon_bench::workers {

/// Worker 0 of a ping-pong case: sends ping i, waits for pong i, records
/// the round trip.
template <class T>
int ping_side(const LatencyCase& c, PairControl& control, SharedArray<std::int64_t>& round_trips) {
  constexpr int kSide = 0;
  auto ends = set_up_worker<T>(latency_worker(c, "bench_ping", kPingTopic, kPongTopic));
  if (!ends) {
    return fail(control, kSide, ends.error().message());
  }
  arrive_and_wait(control);
  SideReport& report = control.side[kSide];
  const std::uint64_t total = c.warmup + c.samples;
  Pacer pacer(period_ns(c));
  std::uint64_t checksum = 0;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == c.warmup) {
      report.measure_begin = CpuTimes::now();
    }
    const std::int64_t start_ns = pacer.next();
    auto status = publish_stamped(*ends->pub, Stamp{.index = i, .time_ns = start_ns}, c.touch);
    if (!status) {
      return fail_with(control, kSide, "publish", status);
    }
    if (status->delivered != 1) {
      return fail(control, kSide, "the pong side's queue was full with one message in flight");
    }
    auto pong = take_spinning(*ends->sub);
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
  auto ends = set_up_worker<T>(latency_worker(c, "bench_pong", kPongTopic, kPingTopic));
  if (!ends) {
    return fail(control, kSide, ends.error().message());
  }
  arrive_and_wait(control);
  SideReport& report = control.side[kSide];
  const std::uint64_t total = c.warmup + c.samples;
  std::uint64_t checksum = 0;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == c.warmup) {
      report.measure_begin = CpuTimes::now();
    }
    auto ping = take_spinning(*ends->sub);
    if (!ping) {
      return fail_with(control, kSide, "take", ping);
    }
    if (c.touch) {
      checksum += read_payload(ping->data, sizeof(T));
    }
    auto status = publish_stamped(*ends->pub, read_stamp(ping->data), c.touch);
    if (!status) {
      return fail_with(control, kSide, "publish", status);
    }
    if (status->delivered != 1) {
      return fail(control, kSide, "the ping side's queue was full with one message in flight");
    }
  }  // each ping goes back to its pool once its pong is out
  report.measure_end = CpuTimes::now();
  keep(checksum);
  signal_finished(control);
  return 0;
}

}  // namespace axon_bench::workers
