// The processes of `axon-bench wakeup`: a publisher (one message after a
// gap, or at a fixed rate, or silent) and a subscriber whose
// SingleThreadedExecutor runs the measuring callback. Internal to
// wakeup_cases.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <thread>

#include "harness/endpoint_calls.hpp"
#include "harness/pair_worker.hpp"
#include "harness/payload.hpp"
#include "harness/worker_setup.hpp"
#include "latency/latency_workers.hpp"
#include "wakeup/wakeup_cases.hpp"
#include <axon/axon.hpp>

namespace axon_bench::workers {

inline constexpr std::string_view kWakeupTopic = "axon_bench/wakeup";
/// How long one spin_for() of the subscriber lasts before it looks at `done`.
inline constexpr auto kSpinSlice = std::chrono::milliseconds(20);

/// Worker 0: sends warmup + samples messages. `send` is false for the idle
/// case: it only stays connected until the subscriber is through.
template <class T>
int wakeup_publisher(const WakeupCase& c, PairControl& control, bool send) {
  constexpr int kSide = 0;
  auto ends = set_up_worker<T>(latency_worker(c.domain_id, sizeof(T), "bench_wake_pub", kWakeupTopic, ""));
  if (!ends) {
    return fail(control, kSide, ends.error().message());
  }
  arrive_and_wait(control);
  SideReport& report = control.side[kSide];
  if (!send) {
    report.measure_begin = CpuTimes::now();
    wait_for_finished(control);
    report.measure_end = CpuTimes::now();
    return 0;
  }
  const std::uint64_t total = c.warmup + c.samples;
  Pacer pacer(c.pattern == WakeupPattern::kRate ? std::llround(1e9 / c.rate_hz) : 0);
  std::minstd_rand random(12'345);  // the same gaps in every case
  std::uniform_int_distribution<std::int64_t> gap(c.gap_min_ns, c.gap_max_ns);
  std::int64_t due_ns = 0;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == c.warmup) {
      report.measure_begin = CpuTimes::now();
    }
    if (pacer.on_schedule()) {
      due_ns = pacer.next();
    } else {
      wait_for_ack(control, i);
      // Busy-wait the gap (exact, unlike a sleep on this VM) while the
      // subscriber's executor runs out of work and, as its strategy says,
      // goes to sleep.
      const std::int64_t until_ns = now_ns() + gap(random);
      while (now_ns() < until_ns) {
        cpu_relax();
      }
    }
    // The due time counts (rate).
    if (const int failed = publish_one(*ends->pub, Stamp{.index = i, .time_ns = due_ns}, false, pacer, control, kSide);
        failed != 0) {
      return failed;
    }
  }
  report.measure_end = CpuTimes::now();
  finish_sending(control);
  return 0;
}

/// Worker 1: a SingleThreadedExecutor with c.wait runs the callback, which
/// records one latency per message at its entry. With `idle_seconds` > 0 it
/// instead spins that long with nothing published and measures its CPU (or
/// only sleeps that long, with `node_only`).
template <class T>
int wakeup_subscriber(const WakeupCase& c, PairControl& control, SharedArray<std::int64_t>& latencies,
                      double idle_seconds, bool node_only = false) {
  constexpr int kSide = 1;
  const WorkerSpec spec = latency_worker(c.domain_id, sizeof(T), "bench_wake_sub", "", kWakeupTopic);
  auto node = create_node(spec);
  if (!node) {
    return fail(control, kSide, node.error().message());
  }
  SideReport& report = control.side[kSide];
  LatencyRecorder recorder(latencies, control, report, c.warmup);
  const std::uint64_t total = c.warmup + c.samples;
  const bool from_schedule = c.pattern == WakeupPattern::kRate;
  axon::SingleThreadedExecutor executor(axon::ExecutorOptions{.wait_strategy = c.wait});
  bool finished = false;
  std::uint64_t seen = 0;
  auto subscription = subscribe_in<T>(**node, spec, executor, [&](const axon::Sample<T>& sample) {
    const std::int64_t entered_ns = now_ns();
    ++seen;
    std::uint64_t index = sample.info().sequence - 1;  // the publisher sends index i as its (i+1)-th message
    std::int64_t start_ns = sample.info().publish_time_ns;
    if (from_schedule) {
      const Stamp stamp = read_stamp(sample->data);
      index = stamp.index;
      start_ns = stamp.time_ns;
    }
    recorder.record(index, entered_ns - start_ns);
    ack(control, index + 1);  // send the next one
    if (index + 1 >= total) {
      finished = true;
      executor.stop();
    }
  });
  if (!subscription) {
    return fail(control, kSide, subscription.error().message());
  }
  std::fill(latencies.data(), latencies.data() + latencies.size(), kMissing);
  arrive_and_wait(control);
  if (idle_seconds > 0) {
    report.measure_begin = CpuTimes::now();
    const auto idle = std::chrono::nanoseconds(std::llround(idle_seconds * 1e9));
    if (node_only) {
      std::this_thread::sleep_for(idle);
    } else if (auto spun = executor.spin_for(idle); !spun) {
      return fail_with(control, kSide, "spin_for", spun);
    }
    report.measure_end = CpuTimes::now();
    report.dropped = seen;  // messages seen while idle: should be none
    signal_finished(control);
    return 0;
  }
  while (!finished) {
    if (auto spun = executor.spin_for(kSpinSlice); !spun) {
      return fail_with(control, kSide, "spin_for", spun);
    }
    // Whatever the publisher published is queued once it is done: run it,
    // then stop (the rest was dropped).
    if (!finished && sender_done(control)) {
      for (;;) {
        auto ran = executor.spin_some();
        if (!ran) {
          return fail_with(control, kSide, "spin_some", ran);
        }
        if (*ran == 0 || finished) {
          break;
        }
      }
      break;
    }
  }
  report.measure_end = CpuTimes::now();
  signal_finished(control);
  return 0;
}

}  // namespace axon_bench::workers
