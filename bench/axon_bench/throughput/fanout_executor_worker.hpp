// A throughput subscriber that runs a SingleThreadedExecutor with one of the
// library's wait strategies (`axon-bench throughput --wait blocking|
// spin-yield-sleep|busy-spin`) instead of polling take(). Internal to
// throughput_cases.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "throughput/throughput_workers.hpp"

namespace axon_bench::workers {

template <class T>
int fanout_executor_subscriber(const ThroughputCase& c, FanoutControl& control, std::size_t subscriber) {
  const std::size_t self = 1 + subscriber;
  const WorkerSpec spec = fanout_subscriber_spec(c, subscriber);
  auto node = create_node(spec);
  if (!node) {
    return control.report[self].error.set(node.error().message());
  }
  FanoutReport& report = control.report[self];
  axon::SingleThreadedExecutor executor(axon::ExecutorOptions{.wait_strategy = c.wait.strategy});
  std::uint64_t next = 0;  // index expected next
  std::uint64_t checksum = 0;
  bool finished = false;
  auto subscription = subscribe_in<T>(**node, spec, executor, [&](const axon::Sample<T>& sample) {
    const std::uint64_t index = read_stamp(sample->data).index;
    if (c.touch) {
      checksum += read_payload(sample->data, sizeof(T));
    }
    count_fanout_message(c, report, next, index);
    if (fanout_complete(control, next)) {
      finished = true;
      executor.stop();
    }
  });
  if (!subscription) {
    return control.report[self].error.set(subscription.error().message());
  }
  fanout_barrier(control, c);
  // The last message may have come before `total` was written.
  while (!finished && !fanout_complete(control, next)) {
    if (auto spun = executor.spin_for(std::chrono::milliseconds(20)); !spun) {
      return fanout_fail_with(control, self, "spin_for", spun);
    }
  }
  report.measure_end = CpuTimes::now();
  keep(checksum);
  fanout_leave(control);
  return 0;
}

}  // namespace axon_bench::workers
