#include "wakeup/wakeup_cases.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "harness/pair_runner.hpp"
#include "harness/payload.hpp"
#include "harness/wait.hpp"
#include "results/table.hpp"
#include "wakeup/wakeup_workers.hpp"

namespace axon_bench {
namespace {

/// The idle case's messages: the smallest payload (nothing is sent).
constexpr std::size_t kIdlePayloadBytes = 64;

std::string case_label(const WakeupCase& c) {
  return "wakeup " + format_bytes(c.payload_bytes) + " " + executor_wait_name(c.wait) +
         (c.pattern == WakeupPattern::kGap ? " gap" : format(" @%.0f Hz", c.rate_hz));
}

CaseResult wakeup_record(const axon::WaitStrategy& wait, std::size_t payload_bytes, const PairControl& control) {
  CaseResult result;
  result.benchmark = "wakeup";
  result.transport = "shm";
  result.wait_strategy = executor_wait_name(wait);
  result.payload_bytes = payload_bytes;
  record_pair_cpu(result, control);
  return result;
}

}  // namespace

CaseResult run_wakeup_case(const WakeupCase& c) {
  require_payload_size(c.payload_bytes, "payload size");
  SharedArray<std::int64_t> samples(c.samples);
  Shared<PairControl> control;
  PairJob job{.label = case_label(c), .cpus = c.cpus, .progress_total = c.samples};
  with_payload_type(c.payload_bytes, [&]<class T>() {
    job.worker[0] = [&](PairControl& pc) { return workers::wakeup_publisher<T>(c, pc, true); };
    job.worker[1] = [&](PairControl& pc) { return workers::wakeup_subscriber<T>(c, pc, samples, 0.0); };
  });
  run_pair_checked(job, *control, c.domain_id);

  CaseResult result = wakeup_record(c.wait, c.payload_bytes, *control);
  result.mode = "oneway";
  result.rate_hz = c.pattern == WakeupPattern::kRate ? c.rate_hz : 0.0;
  const std::span<std::int64_t> recorded = recorded_latencies(samples);
  result.dropped = c.samples - recorded.size();
  result.latency = summarize(recorded);
  const SideReport& receiver = control->side[1];
  const auto wall_ns = static_cast<double>(receiver.measure_end.wall_ns - receiver.measure_begin.wall_ns);
  result.msgs_per_s = wall_ns > 0 ? static_cast<double>(recorded.size()) * 1e9 / wall_ns : 0.0;
  result.mb_per_s = *result.msgs_per_s * static_cast<double>(c.payload_bytes) / 1e6;
  return result;
}

CaseResult run_idle_case(const IdleCase& c) {
  WakeupCase base;
  base.wait = c.wait;
  base.payload_bytes = kIdlePayloadBytes;
  base.cpus = c.cpus;
  base.domain_id = c.domain_id;
  SharedArray<std::int64_t> no_samples(0);
  Shared<PairControl> control;
  PairJob job{.label = "wakeup idle " + (c.node_only ? std::string("node only") : executor_wait_name(c.wait)),
              .cpus = c.cpus};
  using T = Payload<kIdlePayloadBytes>;
  job.worker[0] = [&](PairControl& pc) { return workers::wakeup_publisher<T>(base, pc, false); };
  job.worker[1] = [&](PairControl& pc) {
    return workers::wakeup_subscriber<T>(base, pc, no_samples, c.seconds, c.node_only);
  };
  run_pair_checked(job, *control, c.domain_id);

  CaseResult result = wakeup_record(c.wait, kIdlePayloadBytes, *control);
  result.mode = "idle";
  if (c.node_only) {
    result.wait_strategy = "none";  // no executor: the node's service thread alone
  }
  result.has_latency = false;
  result.dropped = control->side[1].dropped;  // messages the idle subscriber got: none expected
  return result;
}

}  // namespace axon_bench
