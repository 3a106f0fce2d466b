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
  axon::NodeOptions options;
  options.domain_id = c.domain_id;
  options.chunk_classes = std::vector<axon::ChunkClassConfig>{{.payload_bytes = 256, .count = 4}};
  auto node = axon::Node::create("bench_fanout_sub" + std::to_string(subscriber), options);
  if (!node) {
    return fanout_fail_with(control, self, "Node::create", node);
  }
  FanoutReport& report = control.report[self];
  axon::SingleThreadedExecutor executor(axon::ExecutorOptions{.wait_strategy = *c.executor_wait});
  std::uint64_t next = 0;  // index expected next
  std::uint64_t checksum = 0;
  bool finished = false;
  auto subscription = (*node)->subscribe<T>(
      kFanoutTopic, {.depth = c.depth, .overflow = axon::Overflow::kBlockPublisher, .block_timeout_ns = 30'000'000'000},
      [&](const axon::Sample<T>& sample) {
        const std::uint64_t index = read_stamp(sample->data).index;
        if (c.touch) {
          checksum += read_payload(sample->data, sizeof(T));
        }
        count_fanout_message(c, report, next, index);
        // Acquire pairs with the publisher's release store of `total`.
        const std::uint64_t total = control.total.load(std::memory_order_acquire);
        if (total != 0 && next >= total) {
          finished = true;
          executor.stop();
        }
      });
  if (!subscription) {
    return fanout_fail_with(control, self, "subscribe", subscription);
  }
  if (auto added = executor.add(*subscription); !added) {
    return fanout_fail_with(control, self, "executor.add", added);
  }
  if (!wait_until([&] { return (*subscription)->subscriber().publisher_count() >= 1; })) {
    return fanout_fail(control, self, "no publisher connected within 10 s");
  }
  fanout_barrier(control, c.subscribers + 1, c.wait);
  while (!finished) {
    if (auto spun = executor.spin_for(std::chrono::milliseconds(20)); !spun) {
      return fanout_fail_with(control, self, "spin_for", spun);
    }
    // The last message may have come before `total` was written.
    const std::uint64_t total = control.total.load(std::memory_order_acquire);
    if (total != 0 && next >= total) {
      break;
    }
  }
  report.measure_end = CpuTimes::now();
  keep(checksum);
  // Release pairs with the publisher's acquire: we are done with its chunks.
  control.finished.fetch_add(1, std::memory_order_acq_rel);
  return 0;
}

}  // namespace axon_bench::workers
