// The processes of `axon-bench wakeup`: a publisher (one message after a
// gap, or at a fixed rate, or silent) and a subscriber whose
// SingleThreadedExecutor runs the measuring callback. Internal to
// wakeup_cases.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <thread>

#include "harness/pair_runner.hpp"
#include "harness/payload.hpp"
#include "harness/worker_support.hpp"
#include "wakeup/wakeup_cases.hpp"
#include <axon/axon.hpp>

namespace axon_bench::workers {

inline constexpr std::string_view kWakeupTopic = "axon_bench/wakeup";
/// How long one spin_for() of the subscriber lasts before it looks at `done`.
inline constexpr auto kSpinSlice = std::chrono::milliseconds(20);

/// The pool and queue sizing of the latency cases, for this payload.
inline LatencyCase pool_case(std::size_t payload_bytes, std::uint32_t domain_id) {
  LatencyCase base;
  base.payload_bytes = payload_bytes;
  base.domain_id = domain_id;
  return base;
}

/// Worker 0: sends warmup + samples messages. `send` is false for the idle
/// case: it only stays connected until the subscriber is through.
template <class T>
int wakeup_publisher(const WakeupCase& c, PairControl& control, bool send) {
  constexpr int kSide = 0;
  auto node = axon::Node::create("bench_wake_pub", node_options(pool_case(sizeof(T), c.domain_id), true));
  if (!node) {
    return fail_with(control, kSide, "Node::create", node);
  }
  auto pub = (*node)->advertise<T>(kWakeupTopic);
  if (!pub) {
    return fail_with(control, kSide, "advertise", pub);
  }
  if (!wait_until([&] { return (*pub)->subscriber_count() >= 1; })) {
    return fail(control, kSide, "no subscriber connected within 10 s");
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
  const std::int64_t period = c.pattern == WakeupPattern::kRate ? std::llround(1e9 / c.rate_hz) : 0;
  std::minstd_rand random(12'345);  // the same gaps in every case
  std::uniform_int_distribution<std::int64_t> gap(c.gap_min_ns, c.gap_max_ns);
  std::int64_t scheduled_ns = now_ns();
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == c.warmup) {
      report.measure_begin = CpuTimes::now();
    }
    if (period == 0) {
      // Acquire pairs with the subscriber's release store of `ack`.
      while (control.ack.load(std::memory_order_acquire) < i) {
        cpu_relax();
      }
      // Busy-wait the gap (exact, unlike a sleep on this VM) while the
      // subscriber's executor runs out of work and, as its strategy says,
      // goes to sleep.
      const std::int64_t until_ns = now_ns() + gap(random);
      while (now_ns() < until_ns) {
        cpu_relax();
      }
    } else {
      scheduled_ns += period;
      while (now_ns() < scheduled_ns) {
        cpu_relax();
      }
    }
    auto loan = loan_waiting(**pub);
    if (!loan) {
      return fail_with(control, kSide, "loan", loan);
    }
    write_stamp(loan->data, Stamp{.index = i, .time_ns = scheduled_ns});  // the due time counts (rate)
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

/// Worker 1: a SingleThreadedExecutor with c.wait runs the callback, which
/// records one latency per message at its entry. With `idle_seconds` > 0 it
/// instead spins that long with nothing published and measures its CPU (or
/// only sleeps that long, with `node_only`).
template <class T>
int wakeup_subscriber(const WakeupCase& c, PairControl& control, SharedArray<std::int64_t>& latencies,
                      double idle_seconds, bool node_only = false) {
  constexpr int kSide = 1;
  auto node = axon::Node::create("bench_wake_sub", node_options(pool_case(sizeof(T), c.domain_id), false));
  if (!node) {
    return fail_with(control, kSide, "Node::create", node);
  }
  SideReport& report = control.side[kSide];
  const std::uint64_t total = c.warmup + c.samples;
  const bool from_schedule = c.pattern == WakeupPattern::kRate;
  axon::SingleThreadedExecutor executor(axon::ExecutorOptions{.wait_strategy = c.wait});
  std::uint64_t recorded = 0;
  bool finished = false;
  auto subscription =
      (*node)->subscribe<T>(kWakeupTopic, {.depth = depth_for(sizeof(T))}, [&](const axon::Sample<T>& sample) {
        const std::int64_t entered_ns = now_ns();
        std::uint64_t index = sample.info().sequence - 1;  // the publisher sends index i as its (i+1)-th message
        std::int64_t start_ns = sample.info().publish_time_ns;
        if (from_schedule) {
          const Stamp stamp = read_stamp(sample->data);
          index = stamp.index;
          start_ns = stamp.time_ns;
        }
        if (index >= c.warmup && index < total) {
          if (recorded == 0) {
            report.measure_begin = CpuTimes::now();
          }
          latencies[index - c.warmup] = entered_ns - start_ns;
          if ((++recorded & 255) == 0) {
            control.progress.store(recorded, std::memory_order_relaxed);  // display only
          }
        }
        // Release pairs with the publisher's acquire: send the next one.
        control.ack.store(index + 1, std::memory_order_release);
        if (index + 1 >= total) {
          finished = true;
          executor.stop();
        }
      });
  if (!subscription) {
    return fail_with(control, kSide, "subscribe", subscription);
  }
  if (auto added = executor.add(*subscription); !added) {
    return fail_with(control, kSide, "executor.add", added);
  }
  if (!wait_until([&] { return (*subscription)->subscriber().publisher_count() >= 1; })) {
    return fail(control, kSide, "no publisher connected within 10 s");
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
    report.dropped = recorded;                                // messages seen while idle: should be none
    control.ack.store(kFinished, std::memory_order_release);  // pairs with wait_for_finished()
    return 0;
  }
  while (!finished) {
    if (auto spun = executor.spin_for(kSpinSlice); !spun) {
      return fail_with(control, kSide, "spin_for", spun);
    }
    // Acquire pairs with the publisher's release store of `done`: whatever
    // it published is queued now; run it, then stop (the rest was dropped).
    if (!finished && control.done.load(std::memory_order_acquire) != 0) {
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
  control.ack.store(kFinished, std::memory_order_release);  // pairs with wait_for_finished()
  return 0;
}

}  // namespace axon_bench::workers
