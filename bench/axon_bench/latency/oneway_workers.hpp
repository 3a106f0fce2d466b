// The two workers of a one-way latency case: a publisher that sends one
// message at a time (or on a schedule) and a subscriber that records one
// latency per message. Internal to latency_cases.cpp.
#pragma once

#include <algorithm>
#include <cstdint>

#include "harness/endpoint_calls.hpp"
#include "harness/pair_worker.hpp"
#include "harness/payload.hpp"
#include "harness/worker_setup.hpp"
#include "latency/latency_workers.hpp"
#include <axon/axon.hpp>

namespace axon_bench::workers {

/// Worker 0 of a one-way case.
template <class T>
int oneway_publisher(const LatencyCase& c, PairControl& control) {
  constexpr int kSide = 0;
  auto ends = set_up_worker<T>(latency_worker(c, "bench_pub", kOneWayTopic, ""));
  if (!ends) {
    return fail(control, kSide, ends.error().message());
  }
  arrive_and_wait(control);
  SideReport& report = control.side[kSide];
  const std::uint64_t total = c.warmup + c.samples;
  Pacer pacer(period_ns(c));
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == c.warmup) {
      report.measure_begin = CpuTimes::now();
    }
    if (!pacer.on_schedule()) {
      wait_for_ack(control, i);  // one message in flight: the subscriber handled the last
    }
    const std::int64_t start_ns = pacer.next();
    if (const int failed =
            publish_one(*ends->pub, Stamp{.index = i, .time_ns = start_ns}, c.touch, pacer, control, kSide);
        failed != 0) {
      return failed;
    }
  }
  report.measure_end = CpuTimes::now();
  finish_sending(control);
  return 0;
}

/// Worker 1 of a one-way case: records one latency per message.
template <class T>
int oneway_subscriber(const LatencyCase& c, PairControl& control, SharedArray<std::int64_t>& latencies) {
  constexpr int kSide = 1;
  auto ends = set_up_worker<T>(latency_worker(c, "bench_sub", "", kOneWayTopic));
  if (!ends) {
    return fail(control, kSide, ends.error().message());
  }
  std::fill(latencies.data(), latencies.data() + latencies.size(), kMissing);
  arrive_and_wait(control);
  SideReport& report = control.side[kSide];
  LatencyRecorder recorder(latencies, control, report, c.warmup);
  const std::uint64_t total = c.warmup + c.samples;
  const bool from_stamp = c.rate_hz > 0 || c.start_at == StartStamp::kLoan;
  std::uint64_t checksum = 0;
  bool done_seen = false;
  for (;;) {
    std::uint64_t index = 0;
    auto took = try_take(*ends->sub, [&](const axon::Sample<T>& sample) {
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
        start_ns = from_stamp ? stamp.time_ns : sample.info().publish_time_ns;
        index = stamp.index;
      } else {
        received_ns = now_ns();
        start_ns = sample.info().publish_time_ns;
        index = sample.info().sequence - 1;  // the publisher sends index i as its (i+1)-th message
      }
      recorder.record(index, received_ns - start_ns);
    });  // the sample went back to the publisher's pool
    if (!took) {
      return fail_with(control, kSide, "take", took);
    }
    if (*took == Took::kNothing) {
      if (done_seen) {
        break;  // taken after seeing `done`: nothing more will come
      }
      done_seen = sender_done(control);
      cpu_relax();
      continue;
    }
    ack(control, index + 1);
    if (index + 1 >= total) {
      break;
    }
  }
  report.measure_end = CpuTimes::now();
  keep(checksum);
  signal_finished(control);
  return 0;
}

}  // namespace axon_bench::workers
