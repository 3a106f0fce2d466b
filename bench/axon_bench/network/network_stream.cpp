#include "network/network_stream.hpp"

namespace axon_bench {

CaseResult stream_result(const NetworkCase& c, const StreamTally& tally, const PairControl& control) {
  CaseResult result;
  result.benchmark = "network";
  result.mode = "throughput";
  result.payload_bytes = c.payload_bytes;
  result.has_latency = false;
  result.messages = tally.messages;
  result.lost = tally.lost;
  const auto seconds = static_cast<double>(tally.end_ns - tally.begin_ns) / 1e9;
  result.msgs_per_s = seconds > 0 ? static_cast<double>(tally.messages) / seconds : 0.0;
  result.mb_per_s = *result.msgs_per_s * static_cast<double>(c.payload_bytes) / 1e6;
  record_pair_cpu(result, control);
  return result;
}

CaseResult pingpong_result(const NetworkCase& c, std::span<std::int64_t> round_trips, const PairControl& control) {
  CaseResult result;
  result.benchmark = "network";
  result.mode = "pingpong";
  result.payload_bytes = c.payload_bytes;
  result.latency = summarize(round_trips).scaled(0.5);  // one-way, like every pingpong
  const SideReport& a = control.side[0];
  const auto wall_ns = static_cast<double>(a.measure_end.wall_ns - a.measure_begin.wall_ns);
  result.msgs_per_s = wall_ns > 0 ? 2.0 * static_cast<double>(c.samples) * 1e9 / wall_ns : 0.0;
  result.mb_per_s = *result.msgs_per_s * static_cast<double>(c.payload_bytes) / 1e6;
  record_pair_cpu(result, control);
  return result;
}

}  // namespace axon_bench
