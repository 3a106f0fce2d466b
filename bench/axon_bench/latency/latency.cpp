#include "latency/latency.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline/baselines.hpp"
#include "harness/cli_options.hpp"
#include "harness/payload.hpp"
#include "harness/progress.hpp"
#include "latency/fanout_latency.hpp"
#include "latency/latency_cases.hpp"
#include "latency/messages.hpp"
#include "latency/serializer_cases.hpp"
#include "results/table.hpp"

namespace axon_bench {
namespace {

/// Samples when --samples is not given: fewer for payloads of 1 MiB and up,
/// which take longer per message and vary less.
constexpr std::uint64_t kSmallPayloadSamples = 100'000;
constexpr std::uint64_t kLargePayloadSamples = 2'000;
constexpr std::uint64_t kLargePayloadBytes = 1 << 20;

struct LatencyOptions {
  std::vector<int> cpus;
  std::vector<std::uint64_t> sizes = default_payload_sizes();
  std::string mode = "both";
  double rate_hz = 0;
  std::uint64_t samples = 0;
  std::uint64_t warmup = 0;
  bool warmup_given = false;
  bool touch = false;
  std::string start_at = "publish";
  std::uint64_t raw_samples = 100'000;
  std::vector<std::string> serializers;  ///< Non-empty: the serializer cases instead of Payload<N> sizes.
  std::vector<std::string> messages = {"object_list", "point_cloud"};
  std::string end_at = "take";
  std::string verification = "cross-process";
  std::vector<std::uint32_t> fanout;  ///< Non-empty: the fan-out cases (subscriber counts) instead.
};

std::uint64_t samples_for(const LatencyOptions& options, std::uint64_t payload_bytes) {
  if (options.samples != 0) {
    return options.samples;
  }
  return payload_bytes >= kLargePayloadBytes ? kLargePayloadSamples : kSmallPayloadSamples;
}

std::uint64_t warmup_for(const LatencyOptions& options, std::uint64_t samples) {
  if (options.warmup_given) {
    return options.warmup;
  }
  return std::min<std::uint64_t>(std::max<std::uint64_t>(samples / 10, 10), 10'000);
}

messages::Format format_named(const std::string& name) {
  if (name == "flatbuffers") {
    return messages::Format::kFlatBuffers;
  }
  if (name == "protobuf") {
    return messages::Format::kProtobuf;
  }
  return messages::Format::kRaw;
}

messages::Kind kind_named(const std::string& name) {
  return name == "point_cloud" ? messages::Kind::kPointCloud : messages::Kind::kObjectList;
}

/// The serializer cases: the 64 B raw struct first (the reference of the
/// 1.2x target), then each message in each serializer.
std::vector<CaseResult> run_serializer_cases(const LatencyOptions& options, const std::vector<int>& cpus,
                                             const CaseResult& raw) {
  struct Planned {
    messages::Format format;
    messages::Kind kind;
  };
  std::vector<Planned> plan{{messages::Format::kRaw, messages::Kind::kSmall}};
  for (const auto& serializer : options.serializers) {
    for (const auto& message : options.messages) {
      plan.push_back({format_named(serializer), kind_named(message)});
    }
  }
  std::vector<CaseResult> results;
  std::size_t index = 0;
  double raw64_p50 = 0;
  for (const auto& p : plan) {
    SerializerCase c;
    c.format = p.format;
    c.kind = p.kind;
    c.samples = samples_for(options, messages::max_bytes(p.kind));
    c.warmup = warmup_for(options, c.samples);
    c.cpus = cpus;
    c.domain_id = domain_for_case(index++);
    c.end_after_read = options.end_at == "read";
    c.verify = options.verification != "never";
    CaseResult result = run_serializer_case(c);
    result.ratio_to_raw_p50 = raw.latency.p50_ns > 0 ? result.latency.p50_ns / raw.latency.p50_ns : 0.0;
    if (p.kind == messages::Kind::kSmall) {
      raw64_p50 = result.latency.p50_ns;
    }
    result.ratio_to_raw64_p50 = raw64_p50 > 0 ? result.latency.p50_ns / raw64_p50 : 0.0;
    if (!quiet()) {
      std::fprintf(stderr, "  %s %s: p50 %.3f us (%.2fx the 64 B raw struct)\n", result.serializer.c_str(),
                   result.message.c_str(), result.latency.p50_ns / 1000, *result.ratio_to_raw64_p50);
    }
    results.push_back(result);
  }
  return results;
}

/// The fan-out cases, each subscriber count in turn: the latency of each
/// message's last receipt, and what each subscriber beyond the first adds,
/// against the first count measured (1 by default) in the same run.
void run_fanout_cases(const LatencyOptions& options, Output& out) {
  std::vector<CaseResult> results;
  std::fprintf(out.text,
               "fan-out: one publisher, N subscriber processes (blocking wait set), one %s message in "
               "flight, latency = publish() to the last subscriber's take()\n",
               format_bytes(options.sizes.front()).c_str());
  std::fprintf(out.text, "%12s %10s %10s %22s %22s\n", "subscribers", "p50 us", "p99 us", "p50 ns per extra sub",
               "p99 ns per extra sub");
  for (std::size_t i = 0; i < options.fanout.size(); ++i) {
    FanoutLatencyCase c;
    c.payload_bytes = options.sizes.front();
    c.subscribers = options.fanout[i];
    c.samples = samples_for(options, c.payload_bytes);
    c.warmup = warmup_for(options, c.samples);
    c.domain_id = domain_for_case(i);
    results.push_back(run_fanout_latency_case(c));
    const CaseResult& first = results.front();
    const CaseResult& r = results.back();
    const double extra = static_cast<double>(c.subscribers) - static_cast<double>(*first.subscribers);
    std::fprintf(out.text, "%12u %10.3f %10.3f %22s %22s\n", c.subscribers, r.latency.p50_ns / 1000,
                 r.latency.p99_ns / 1000,
                 extra > 0 ? format("%.0f", (r.latency.p50_ns - first.latency.p50_ns) / extra).c_str() : "-",
                 extra > 0 ? format("%.0f", (r.latency.p99_ns - first.latency.p99_ns) / extra).c_str() : "-");
  }
  out.record(results);
}

void run_latency_command(const LatencyOptions& options, Output& out) {
  for (const auto bytes : options.sizes) {
    require_payload_size(bytes, "--sizes");
  }
  if (!options.fanout.empty()) {
    run_fanout_cases(options, out);
    return;
  }
  if (!options.serializers.empty() &&
      (options.mode == "pingpong" || options.rate_hz > 0 || options.touch || options.start_at == "loan")) {
    throw std::invalid_argument(
        "--serializer measures one-way latency from publish(), one message in flight: it does not combine with "
        "--mode pingpong, --rate, --touch or --start-at loan");
  }
  const std::vector<int> cpus = choose_cpu_pair(options.cpus);
  out.log.run.cpus = cpus;
  if (cpus[0] >= 0 && cpus[0] == cpus[1]) {
    std::fprintf(stderr, "warning: both processes busy-poll on CPU %d; expect time slices, not latencies\n", cpus[0]);
  }

  std::fprintf(out.text, "raw cache-line ping-pong on CPUs %d and %d (the same-run baseline)\n", cpus[0], cpus[1]);
  CaseResult raw = measure_cacheline_pingpong(
      PingPongSetup{.cpus = cpus, .samples = options.raw_samples, .warmup = options.raw_samples / 10});
  raw.ratio_to_raw_p50 = 1.0;
  std::fprintf(out.text, "  one-way p50 %.3f us, p99 %.3f us\n", raw.latency.p50_ns / 1000, raw.latency.p99_ns / 1000);

  if (!options.serializers.empty()) {
    std::vector<CaseResult> results{raw};
    const auto cases = run_serializer_cases(options, cpus, raw);
    results.insert(results.end(), cases.begin(), cases.end());
    std::fprintf(out.text, "\n");
    print_latency_table(out.text, results);
    std::fprintf(
        out.text,
        "serializer cases: one-way, one message in flight, from just before publish() to %s "
        "(FlatBuffers %s, Protobuf parsed)\n",
        options.end_at == "read" ? "the subscriber having read the message's header" : "take() returning the sample",
        options.verification == "never" ? "not verified" : "verified");
    if (options.end_at == "read" || options.verification == "never") {
      out.log.run.notes.push_back(std::string("serializer cases: ") +
                                  (options.end_at == "read" ? "clock stops after reading the header" : "") +
                                  (options.end_at == "read" && options.verification == "never" ? "; " : "") +
                                  (options.verification == "never" ? "FlatBuffers verification off" : ""));
    }
    out.record(results);
    return;
  }

  std::vector<LatencyMode> modes;
  if (options.mode != "pingpong") {
    modes.push_back(LatencyMode::kOneWay);
  }
  if (options.mode != "oneway") {
    modes.push_back(LatencyMode::kPingPong);
  }
  std::vector<CaseResult> results{raw};
  std::size_t index = 0;
  for (const auto bytes : options.sizes) {
    for (const auto mode : modes) {
      LatencyCase c;
      c.mode = mode;
      c.payload_bytes = bytes;
      c.touch = options.touch;
      c.rate_hz = options.rate_hz;
      c.start_at = options.start_at == "loan" ? StartStamp::kLoan : StartStamp::kPublish;
      c.samples = samples_for(options, bytes);
      c.warmup = warmup_for(options, c.samples);
      c.cpus = cpus;
      c.domain_id = domain_for_case(index++);
      CaseResult result = run_latency_case(c);
      result.ratio_to_raw_p50 = raw.latency.p50_ns > 0 ? result.latency.p50_ns / raw.latency.p50_ns : 0.0;
      if (!quiet()) {
        std::fprintf(stderr, "  %s %s: p50 %.3f us (%.2fx raw)%s\n", format_bytes(bytes).c_str(), result.mode.c_str(),
                     result.latency.p50_ns / 1000, *result.ratio_to_raw_p50,
                     result.dropped != 0
                         ? format(", %llu dropped", static_cast<unsigned long long>(result.dropped)).c_str()
                         : "");
      }
      results.push_back(result);
    }
  }
  std::fprintf(out.text, "\n");
  print_latency_table(out.text, results);
  for (const auto& r : results) {
    if (r.dropped != 0) {
      std::fprintf(
          out.text, "note: %s %s lost %llu messages (queue full at --rate %.0f Hz); percentiles cover the rest\n",
          format_bytes(r.payload_bytes).c_str(), r.mode.c_str(), static_cast<unsigned long long>(r.dropped), r.rate_hz);
    }
  }
  out.record(results);
}

}  // namespace

Command add_latency_command(CLI::App& app) {
  auto options = std::make_shared<LatencyOptions>();
  CLI::App* cmd = add_measuring_command(app, "latency");
  add_cpu_pair_option(*cmd, options->cpus, cpu_pair_help("publisher/ping"));
  add_size_list_option(*cmd, "--sizes", options->sizes, kPayloadSizesHelp);
  add_checked_option(*cmd, "--mode", options->mode,
                     "oneway: publisher -> subscriber, latency = take time - start stamp; pingpong: ping and pong "
                     "topics, latency = round trip / 2; both",
                     CLI::IsMember({"oneway", "pingpong", "both"}));
  add_checked_option(*cmd, "--rate", options->rate_hz,
                     "Messages (round trips) per second. 0: send the next one as soon as the previous one arrived "
                     "(one in flight, no queueing). >0: send on a fixed schedule and count latency from the "
                     "scheduled send time, so a stall delays every later message too (no coordinated omission)",
                     CLI::NonNegativeNumber);
  cmd->add_option("--samples", options->samples,
                  "Messages (round trips) recorded per case. 0: 100000 below 1 MiB, 2000 from 1 MiB")
      ->capture_default_str();
  auto* warmup = cmd->add_option("--warmup", options->warmup,
                                 "Messages sent first and not recorded (default: samples / 10, 10 to 10000)");
  cmd->add_flag("--touch", options->touch,
                "Write every payload byte on send and read every byte on receipt, before the receive time is "
                "taken (default: only a 16-byte stamp is written and read: zero copy). One-way figures start "
                "after the writing unless --start-at loan");
  add_checked_option(*cmd, "--start-at", options->start_at,
                     "Where a one-way latency starts without --rate. publish: SampleInfo::publish_time_ns, stamped "
                     "inside publish(); loan: just before loan(), so loan, write and publish count too",
                     CLI::IsMember({"publish", "loan"}));
  cmd->add_option("--serializer", options->serializers,
                  "Measure the serializer messages instead of --sizes: the 2 KiB ObjectList (128 targets) and a "
                  "1 MiB PointCloud in each of these serializers (raw,flatbuffers,protobuf), one-way, one in flight, "
                  "from just before publish() to the subscriber holding the sample (FlatBuffers verified, Protobuf "
                  "parsed), next to a 64 B raw struct measured the same way")
      ->delimiter(',')
      ->check(CLI::IsMember({"raw", "flatbuffers", "protobuf"}));
  add_checked_option(*cmd, "--messages", options->messages, "With --serializer: the messages, object_list,point_cloud",
                     CLI::IsMember({"object_list", "point_cloud"}))
      ->delimiter(',');
  add_checked_option(*cmd, "--end-at", options->end_at,
                     "With --serializer: take: the clock stops when take() returns the sample (FlatBuffers verified, "
                     "Protobuf parsed, a raw struct not read); read: after the subscriber also read the message's "
                     "header (the first access of user code)",
                     CLI::IsMember({"take", "read"}));
  add_checked_option(*cmd, "--verification", options->verification,
                     "With --serializer: cross-process (the default QoS: FlatBuffers verified) or never "
                     "(SubscriberQos::verification = kNever, to see what verification costs)",
                     CLI::IsMember({"cross-process", "never"}));
  add_checked_option(*cmd, "--fanout", options->fanout,
                     "Measure fan-out instead: for each count N (e.g. 1,8,32,100), one publisher and N subscriber "
                     "processes (not pinned; each sleeps in a blocking wait set), one message of the first --sizes "
                     "in flight; the latency of a message is its last subscriber's receipt; prints the cost of "
                     "each subscriber beyond the first count's",
                     CLI::Range(1U, kMaxFanoutLatencySubscribers))
      ->delimiter(',');
  add_checked_option(*cmd, "--raw-samples", options->raw_samples,
                     "Round trips of the raw cache-line ping-pong run first", CLI::PositiveNumber);
  cmd->description(
      "Latency of axon's shared-memory transport between two processes pinned to two CPUs, per payload size, "
      "next to the raw cache-line ping-pong measured first on the same CPUs.");
  return {cmd, [options, warmup](Output& out) {
            options->warmup_given = warmup->count() > 0;
            run_latency_command(*options, out);
          }};
}

}  // namespace axon_bench
