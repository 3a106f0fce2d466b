#include "latency/serializer_cases.hpp"

#include <stdexcept>
#include <string>

#include "harness/pair_runner.hpp"
#include "latency/serializer_workers.hpp"
#include "results/table.hpp"

namespace axon_bench {
namespace {

using messages::Format;
using messages::Kind;

std::string case_label(const SerializerCase& c) {
  return "latency " + std::string(name_of(c.format)) + " " + std::string(name_of(c.kind));
}

template <Format F, Kind K>
void set_workers(const SerializerCase& c, PairJob& job, SharedArray<std::int64_t>& latencies,
                 SharedArray<std::int64_t>& starts) {
  job.worker[0] = [&c, &starts](PairControl& pc) { return workers::serializer_publisher<F, K>(c, pc, starts); };
  job.worker[1] = [&c, &latencies, &starts](PairControl& pc) {
    return workers::serializer_subscriber<F, K>(c, pc, latencies, starts);
  };
}

void choose_workers(const SerializerCase& c, PairJob& job, SharedArray<std::int64_t>& latencies,
                    SharedArray<std::int64_t>& starts) {
  switch (c.format) {
    case Format::kRaw:
      switch (c.kind) {
        case Kind::kSmall: return set_workers<Format::kRaw, Kind::kSmall>(c, job, latencies, starts);
        case Kind::kObjectList: return set_workers<Format::kRaw, Kind::kObjectList>(c, job, latencies, starts);
        case Kind::kPointCloud: return set_workers<Format::kRaw, Kind::kPointCloud>(c, job, latencies, starts);
      }
      break;
    case Format::kFlatBuffers:
      switch (c.kind) {
        case Kind::kObjectList: return set_workers<Format::kFlatBuffers, Kind::kObjectList>(c, job, latencies, starts);
        case Kind::kPointCloud: return set_workers<Format::kFlatBuffers, Kind::kPointCloud>(c, job, latencies, starts);
        case Kind::kSmall: break;
      }
      break;
    case Format::kProtobuf:
      switch (c.kind) {
        case Kind::kObjectList: return set_workers<Format::kProtobuf, Kind::kObjectList>(c, job, latencies, starts);
        case Kind::kPointCloud: return set_workers<Format::kProtobuf, Kind::kPointCloud>(c, job, latencies, starts);
        case Kind::kSmall: break;
      }
      break;
  }
  throw std::invalid_argument(case_label(c) + ": no such message (the 64 B message is raw only)");
}

}  // namespace

CaseResult run_serializer_case(const SerializerCase& c) {
  SharedArray<std::int64_t> latencies(c.samples);
  SharedArray<std::int64_t> starts(c.warmup + c.samples);
  Shared<PairControl> control;
  PairJob job{.label = case_label(c), .cpus = c.cpus, .progress_total = c.samples};
  choose_workers(c, job, latencies, starts);
  run_pair_checked(job, *control, c.domain_id);

  CaseResult result;
  result.benchmark = "latency";
  result.mode = "oneway";
  result.transport = "shm";
  result.serializer = std::string(name_of(c.format));
  result.message = std::string(name_of(c.kind));
  const SideReport& receiver = control->side[1];
  result.payload_bytes = receiver.payload_bytes;
  result.latency = summarize({latencies.data(), latencies.size()});
  const auto wall_ns = static_cast<double>(receiver.measure_end.wall_ns - receiver.measure_begin.wall_ns);
  result.msgs_per_s = wall_ns > 0 ? static_cast<double>(c.samples) * 1e9 / wall_ns : 0.0;
  result.mb_per_s = *result.msgs_per_s * static_cast<double>(result.payload_bytes) / 1e6;
  record_pair_cpu(result, *control);
  return result;
}

}  // namespace axon_bench
