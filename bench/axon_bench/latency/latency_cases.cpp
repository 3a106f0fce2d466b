#include "latency/latency_cases.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "harness/pair_runner.hpp"
#include "harness/payload.hpp"
#include "latency/oneway_workers.hpp"
#include "latency/pingpong_workers.hpp"
#include "results/table.hpp"

namespace axon_bench {
namespace {

std::string case_label(const LatencyCase& c) {
  return "latency " + format_bytes(c.payload_bytes) + (c.mode == LatencyMode::kOneWay ? " oneway" : " pingpong");
}

}  // namespace

CaseResult run_latency_case(const LatencyCase& c) {
  require_payload_size(c.payload_bytes, "payload size");
  SharedArray<std::int64_t> samples(c.samples);
  Shared<PairControl> control;
  PairJob job{.label = case_label(c), .cpus = c.cpus, .progress_total = c.samples};
  with_payload_type(c.payload_bytes, [&]<class T>() {
    if (c.mode == LatencyMode::kOneWay) {
      job.worker[0] = [&](PairControl& pc) { return workers::oneway_publisher<T>(c, pc); };
      job.worker[1] = [&](PairControl& pc) { return workers::oneway_subscriber<T>(c, pc, samples); };
    } else {
      job.worker[0] = [&](PairControl& pc) { return workers::ping_side<T>(c, pc, samples); };
      job.worker[1] = [&](PairControl& pc) { return workers::pong_side<T>(c, pc); };
    }
  });
  run_pair_checked(job, *control, c.domain_id);

  CaseResult result;
  result.benchmark = "latency";
  result.mode = c.mode == LatencyMode::kOneWay ? "oneway" : "pingpong";
  result.transport = "shm";
  result.payload_bytes = c.payload_bytes;
  result.touch = c.touch;
  result.rate_hz = c.rate_hz;
  const SideReport& sender = control->side[0];
  const SideReport& receiver = control->side[1];
  const std::span<std::int64_t> recorded = recorded_latencies(samples);
  result.dropped = c.samples - recorded.size();
  const LatencySummary summary = summarize(recorded);
  auto messages = static_cast<double>(recorded.size());
  const SideReport& clock_side = c.mode == LatencyMode::kOneWay ? receiver : sender;
  if (c.mode == LatencyMode::kOneWay) {
    result.latency = summary;
  } else {
    result.latency = summary.scaled(0.5);
    messages *= 2;  // a ping and a pong per round trip
  }
  const auto wall_ns = static_cast<double>(clock_side.measure_end.wall_ns - clock_side.measure_begin.wall_ns);
  result.msgs_per_s = wall_ns > 0 ? messages * 1e9 / wall_ns : 0.0;
  result.mb_per_s = *result.msgs_per_s * static_cast<double>(c.payload_bytes) / 1e6;
  record_pair_cpu(result, *control);
  return result;
}

}  // namespace axon_bench
