#include "throughput/throughput_cases.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "harness/process_group.hpp"
#include "results/table.hpp"
#include "throughput/fanout_executor_worker.hpp"
#include "throughput/throughput_workers.hpp"

namespace axon_bench {
namespace {

std::string case_label(const ThroughputCase& c) {
  return "throughput " + format_bytes(c.payload_bytes) + " x" + std::to_string(c.subscribers);
}

}  // namespace

CaseResult run_throughput_case(const ThroughputCase& c) {
  require_payload_size(c.payload_bytes, "payload size");
  if (c.subscribers == 0 || c.subscribers > kMaxThroughputSubscribers) {
    throw std::invalid_argument("subscribers: 1 to " + std::to_string(kMaxThroughputSubscribers));
  }
  Shared<FanoutControl> control;
  ProcessGroupJob job;
  job.label = case_label(c);
  job.workers = c.subscribers + 1;
  job.body = [&](std::size_t index) {
    const int cpu = index < c.cpus.size() ? c.cpus[index] : -1;
    if (const std::string error = pin_to_cpu(cpu); !error.empty()) {
      return control->report[index].error.set(error);
    }
    int status = 1;
    with_payload_type(c.payload_bytes, [&]<class T>() {
      if (index == 0) {
        status = workers::fanout_publisher<T>(c, *control);
      } else if (c.wait.executor) {
        status = workers::fanout_executor_subscriber<T>(c, *control, index - 1);
      } else {
        status = workers::fanout_subscriber<T>(c, *control, index - 1);
      }
    });
    return status;
  };
  job.error_of = [&](std::size_t index) -> ErrorText& { return control->report[index].error; };
  job.name_of = [](std::size_t index) {
    std::string name = index == 0 ? "publisher" : "subscriber ";
    if (index > 0) {
      name += std::to_string(index - 1);
    }
    return name;
  };
  job.progress = [&] { return control->progress_ms.load(std::memory_order_relaxed); };
  job.progress_total = static_cast<std::uint64_t>(c.duration_s * 1000);
  job.progress_unit = "ms";
  job.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(c.duration_s * 1000) + 120'000);
  if (const std::string error = run_process_group(job); !error.empty()) {
    remove_domain_files(c.domain_id);
    throw std::runtime_error(case_label(c) + ": " + error);
  }

  const FanoutReport& pub = control->report[0];
  const std::uint64_t total = control->total.load(std::memory_order_acquire);
  const std::uint64_t measured = total > c.warmup ? total - c.warmup : 0;
  CaseResult result;
  result.benchmark = "throughput";
  result.mode = "fanout";
  result.transport = "shm";
  result.wait_strategy = c.wait.executor ? "executor-" + c.wait.name() : c.wait.name();
  result.payload_bytes = c.payload_bytes;
  result.touch = c.touch;
  result.has_latency = false;
  result.messages = measured;
  result.subscribers = c.subscribers;
  result.dropped = pub.lost;
  // Delivered to all: from the publisher's first counted message to the
  // last subscriber's last message.
  std::int64_t last_ns = pub.measure_end.wall_ns;
  double cpu_total = cpu_percent(pub.measure_begin, pub.measure_end);
  result.cpu_percent_per_process.push_back(cpu_total);
  result.cpu_percent_sender = cpu_total;
  double cpu_subscribers = 0;
  for (std::uint32_t s = 0; s < c.subscribers; ++s) {
    const FanoutReport& r = control->report[1 + s];
    last_ns = std::max(last_ns, r.last_ns);
    result.received_per_subscriber.push_back(r.received);
    result.dropped += r.lost;
    const double cpu = cpu_percent(r.measure_begin, r.measure_end);
    result.cpu_percent_per_process.push_back(cpu);
    cpu_subscribers += cpu;
  }
  result.cpu_percent_receiver = cpu_subscribers;
  result.cpu_percent = cpu_total + cpu_subscribers;
  const auto wall_ns = static_cast<double>(last_ns - pub.measure_begin.wall_ns);
  result.msgs_per_s = wall_ns > 0 ? static_cast<double>(measured) * 1e9 / wall_ns : 0.0;
  result.mb_per_s = *result.msgs_per_s * static_cast<double>(c.payload_bytes) / 1e6;
  result.expected = measured;
  result.published = measured;
  std::uint64_t delivered = 0;
  for (const auto r : result.received_per_subscriber) {
    delivered += r;
  }
  result.delivered = delivered;
  result.lost = measured * c.subscribers - std::min(measured * c.subscribers, delivered);
  return result;
}

}  // namespace axon_bench
