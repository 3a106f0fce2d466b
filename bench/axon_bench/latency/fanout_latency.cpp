#include "latency/fanout_latency.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "harness/endpoint_calls.hpp"
#include "harness/payload.hpp"
#include "harness/process_group.hpp"
#include "harness/shared_memory.hpp"
#include "harness/system.hpp"
#include "harness/worker_setup.hpp"
#include "results/table.hpp"
#include "stats/stats.hpp"
#include <axon/axon.hpp>

namespace axon_bench {
namespace {

using workers::publish_stamped;
using workers::Took;
using workers::try_take;

constexpr std::string_view kTopic = "axon_bench/fanout_latency";

/// Shared state of one case. Thread safety / memory ordering: `acks` is
/// raised by every subscriber (release) and read by the publisher (acquire):
/// all N took message i before message i + 1 goes out. `done` and
/// `finished` have one writer side each, read with acquire.
struct Control {
  alignas(kCacheLine) StartBarrier start;
  alignas(kCacheLine) std::atomic<std::uint64_t> acks{0};
  alignas(kCacheLine) std::atomic<std::uint32_t> finished{0};  ///< Subscribers through.
  alignas(kCacheLine) std::atomic<std::uint64_t> progress{0};  ///< Messages sent (display only).
  struct Report {
    CpuTimes measure_begin;
    CpuTimes measure_end;
    ErrorText error;
  } report[kMaxFanoutLatencySubscribers + 1];  ///< [0] the publisher, [1 + s] subscriber s.
};

workers::WorkerSpec spec_of(const FanoutLatencyCase& c, bool publisher) {
  return {.node = publisher ? "fanout_pub" : "fanout_sub",
          .options = workers::node_in_domain(c.domain_id, publisher ? workers::chunk_classes_for(c.payload_bytes)
                                                                    : std::vector<axon::ChunkClassConfig>{}),
          .publishes = publisher ? kTopic : std::string_view{},
          .subscribes = publisher ? std::string_view{} : kTopic,
          .qos = axon::SubscriberQos{.depth = 4},  // one message in flight; 100 queues fit pool.queue_slots
          .subscribers = c.subscribers};
}

template <class T>
int publisher(const FanoutLatencyCase& c, Control& control) {
  auto ends = workers::set_up_worker<T>(spec_of(c, true));  // waits for every subscriber
  if (!ends) {
    return control.report[0].error.set(ends.error().message());
  }
  control.start.arrive_and_wait(c.subscribers + 1);
  control.report[0].measure_begin = CpuTimes::now();
  for (std::uint64_t i = 0; i < c.warmup + c.samples; ++i) {
    // Acquire pairs with each subscriber's release increment: all took i - 1.
    while (control.acks.load(std::memory_order_acquire) < i * c.subscribers) {
      cpu_relax();
    }
    auto status = publish_stamped(*ends->pub, Stamp{.index = i, .time_ns = now_ns()});
    if (!status || status->delivered != c.subscribers) {
      return control.report[0].error.set(status ? "a subscriber's queue was full with one message in flight"
                                                : std::string(status.error().message()));
    }
    control.progress.store(i + 1, std::memory_order_relaxed);  // display only
  }
  control.report[0].measure_end = CpuTimes::now();
  // The subscribers read from our pool: stay until all are through.
  while (control.finished.load(std::memory_order_acquire) < c.subscribers) {  // pairs with their release
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return 0;
}

/// Subscriber `s`: each message's latency goes into its slot when it is the
/// largest so far (the last receipt of the message wins).
template <class T>
int subscriber(const FanoutLatencyCase& c, Control& control, std::size_t s, SharedArray<std::int64_t>& last) {
  Control::Report& report = control.report[1 + s];
  auto ends = workers::set_up_worker<T>(spec_of(c, false));
  if (!ends) {
    return report.error.set(ends.error().message());
  }
  axon::WaitSet waits(axon::WaitStrategy::blocking());
  if (auto attached = waits.attach(ends->sub); !attached) {
    return report.error.set(attached.error().message());
  }
  control.start.arrive_and_wait(c.subscribers + 1);
  report.measure_begin = CpuTimes::now();
  const std::uint64_t total = c.warmup + c.samples;
  for (std::uint64_t handled = 0; handled < total;) {
    auto took = try_take(*ends->sub, [&](const axon::Sample<T>& sample) {
      const std::int64_t latency = now_ns() - sample.info().publish_time_ns;
      const std::uint64_t index = sample.info().sequence - 1;
      if (index >= c.warmup && index - c.warmup < last.size()) {
        std::atomic_ref<std::int64_t> slot(last[index - c.warmup]);
        // Relaxed: the parent reads the slots after waitpid().
        std::int64_t seen = slot.load(std::memory_order_relaxed);
        while (latency > seen && !slot.compare_exchange_weak(seen, latency, std::memory_order_relaxed)) {
        }
      }
    });
    if (!took) {
      return report.error.set("take: " + std::string(took.error().message()));
    }
    if (*took == Took::kNothing) {
      (void)waits.wait(std::chrono::milliseconds(100));  // a timeout only loops
      continue;
    }
    ++handled;
    control.acks.fetch_add(1, std::memory_order_release);  // pairs with the publisher's acquire
  }
  report.measure_end = CpuTimes::now();
  control.finished.fetch_add(1, std::memory_order_release);  // pairs with the publisher's acquire
  return 0;
}

}  // namespace

CaseResult run_fanout_latency_case(const FanoutLatencyCase& c) {
  require_payload_size(c.payload_bytes, "payload size");
  if (c.subscribers == 0 || c.subscribers > kMaxFanoutLatencySubscribers) {
    throw std::invalid_argument("--fanout: 1 to " + std::to_string(kMaxFanoutLatencySubscribers) + " subscribers");
  }
  Shared<Control> control;
  SharedArray<std::int64_t> last(c.samples);
  const std::string label = "fanout latency " + format_bytes(c.payload_bytes) + " x" + std::to_string(c.subscribers);
  ProcessGroupJob job;
  job.label = label;
  job.workers = c.subscribers + 1;
  job.body = [&](std::size_t index) {
    int status = 1;
    with_payload_type(c.payload_bytes, [&]<class T>() {
      status = index == 0 ? publisher<T>(c, *control) : subscriber<T>(c, *control, index - 1, last);
    });
    return status;
  };
  job.error_of = [&](std::size_t index) -> ErrorText& { return control->report[index].error; };
  job.name_of = [](std::size_t index) {
    return index == 0 ? std::string("publisher") : "subscriber " + std::to_string(index - 1);
  };
  job.progress = [&] { return control->progress.load(std::memory_order_relaxed); };
  job.progress_total = c.warmup + c.samples;
  job.progress_unit = "messages";
  if (const std::string error = run_process_group(job); !error.empty()) {
    remove_domain_files(c.domain_id);
    throw std::runtime_error(label + ": " + error);
  }
  CaseResult result;
  result.benchmark = "latency";
  result.mode = "fanout";
  result.transport = "shm";
  result.wait_strategy = "blocking";
  result.payload_bytes = c.payload_bytes;
  result.subscribers = c.subscribers;
  result.latency = summarize({last.data(), last.size()});
  double cpu_subscribers = 0;
  for (std::uint32_t s = 0; s < c.subscribers; ++s) {
    cpu_subscribers += cpu_percent(control->report[1 + s].measure_begin, control->report[1 + s].measure_end);
  }
  result.cpu_percent_sender = cpu_percent(control->report[0].measure_begin, control->report[0].measure_end);
  result.cpu_percent_receiver = cpu_subscribers;
  result.cpu_percent = *result.cpu_percent_sender + cpu_subscribers;
  return result;
}

}  // namespace axon_bench
