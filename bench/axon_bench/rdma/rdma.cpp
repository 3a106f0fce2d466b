#include "rdma/rdma.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/cli_options.hpp"
#include "harness/payload.hpp"
#include "harness/system.hpp"
#include "harness/wait.hpp"
#include "latency/latency_cases.hpp"
#include "network/network_cases.hpp"
#include "network/network_config.hpp"
#include "rdma/perftest_baseline.hpp"
#include "results/table.hpp"
#include "tests/support/common/temp_dir.hpp"

namespace axon_bench {
namespace {

constexpr std::uint64_t kLargeBytes = 1 << 20;

struct RdmaOptions {
  std::string device = "rxe0";
  std::vector<std::string> addresses = {"10.0.2.15", "10.0.2.16"};
  std::vector<std::uint64_t> sizes = {2048};
  std::vector<std::uint64_t> throughput_sizes = {1048576};
  std::uint64_t samples = 2000;
  std::uint64_t rounds = 1;
  double duration_s = 5;
  std::uint64_t bw_iterations = 200;
  std::vector<int> cpus;
  std::string only = "both";
  std::string axon_wait = "busy-spin";
  std::string reliability = "reliable";
};

std::string ratio_text(const std::optional<double>& ratio) { return ratio ? format("%.2fx", *ratio) : "-"; }

/// perftest's one-way figures as a latency record (microseconds to ns).
CaseResult perftest_latency_record(const PerftestLatency& p, const std::string& tool) {
  CaseResult r;
  r.benchmark = "rdma";
  r.mode = "pingpong";
  r.transport = tool;
  r.wait_strategy = "busy-poll";
  r.payload_bytes = p.bytes;
  r.latency.samples = p.iterations;
  r.latency.min_ns = p.min_us * 1000;
  r.latency.p50_ns = p.typical_us * 1000;
  r.latency.mean_ns = p.avg_us * 1000;
  r.latency.p99_ns = p.p99_us * 1000;
  r.latency.p999_ns = p.p999_us * 1000;
  r.latency.max_ns = p.max_us * 1000;
  return r;
}

CaseResult perftest_bandwidth_record(const PerftestBandwidth& p) {
  CaseResult r;
  r.benchmark = "rdma";
  r.mode = "throughput";
  r.transport = "ib_write_bw";
  r.wait_strategy = "busy-poll";
  r.payload_bytes = p.bytes;
  r.has_latency = false;
  r.messages = p.iterations;
  r.mb_per_s = p.average_mib_per_s * 1048576.0 / 1e6;
  r.msgs_per_s = p.average_mib_per_s * 1048576.0 / static_cast<double>(p.bytes);
  return r;
}

void print_latency_table(std::FILE* out, const std::vector<CaseResult>& cases) {
  Table table({"payload", "path", "samples", "p50 us", "p99 us", "p99.9 us", "max us", "x write_lat p50",
               "x send_lat p50", "x floor p50", "cpu% a | b"});
  for (const auto& r : cases) {
    const bool axon = r.transport == "rdma";
    table.add_row(
        {format_bytes(r.payload_bytes), axon ? "axon rdma" : (r.transport == "shm" ? "axon shm" : r.transport),
         std::to_string(r.latency.samples), format_us(r.latency.p50_ns), format_us(r.latency.p99_ns),
         format_us(r.latency.p999_ns), format_us(r.latency.max_ns), axon ? ratio_text(r.ratio_to_perftest) : "-",
         axon ? ratio_text(r.ratio_to_send_lat) : "-", axon ? ratio_text(r.ratio_to_floor) : "-",
         axon ? format("%.0f | %.0f", r.cpu_percent_sender.value_or(0), r.cpu_percent_receiver.value_or(0)) : "-"});
  }
  std::fprintf(out,
               "one-way latency (half the round trip; perftest: its typical = median; floor: ib_send_lat + axon "
               "shm)\n");
  table.print(out);
}

void print_throughput_table(std::FILE* out, const std::vector<CaseResult>& cases) {
  Table table({"payload", "path", "messages", "msgs/s", "MB/s", "lost", "x perftest", "cpu% snd | rcv"});
  for (const auto& r : cases) {
    const bool axon = r.transport == "rdma";
    table.add_row(
        {format_bytes(r.payload_bytes), axon ? "axon rdma (reliable)" : "ib_write_bw", std::to_string(r.messages),
         format("%.0f", r.msgs_per_s.value_or(0)), format("%.1f", r.mb_per_s.value_or(0)),
         axon ? std::to_string(r.lost.value_or(0)) : "-", axon ? ratio_text(r.ratio_to_perftest) : "1",
         axon ? format("%.0f | %.0f", r.cpu_percent_sender.value_or(0), r.cpu_percent_receiver.value_or(0)) : "-"});
  }
  std::fprintf(out, "\nthroughput address 0 -> address 1 (ib_write_bw: its average)\n");
  table.print(out);
}

/// How the targets came out, as ratios of the same boot: 2 KiB p50
/// within 1.5x ib_write_lat, 1 MiB throughput at least 80 % of ib_write_bw.
void print_targets(std::FILE* out, const std::vector<CaseResult>& latencies, const std::vector<CaseResult>& streams) {
  for (const auto& r : latencies) {
    if (r.transport == "rdma" && r.payload_bytes == 2048 && r.ratio_to_perftest) {
      std::fprintf(out, "target 2 KiB p50 <= 1.5x ib_write_lat: %.2fx (%s)\n", *r.ratio_to_perftest,
                   *r.ratio_to_perftest <= 1.5 ? "met" : "NOT met");
    }
    if (r.transport == "rdma" && r.payload_bytes == 2048 && r.ratio_to_send_lat) {
      std::fprintf(out, "2 KiB p50 <= 1.5x ib_send_lat (a receiver told by a completion): %.2fx (%s)\n",
                   *r.ratio_to_send_lat, *r.ratio_to_send_lat <= 1.5 ? "met" : "NOT met");
    }
    if (r.transport == "rdma" && r.payload_bytes == 2048 && r.ratio_to_floor) {
      std::fprintf(out,
                   "2 KiB p50 <= 1.5x floor (ib_send_lat + axon's shared-memory hop, the two steps a receiving "
                   "middleware cannot skip): %.2fx (%s)\n",
                   *r.ratio_to_floor, *r.ratio_to_floor <= 1.5 ? "met" : "NOT met");
    }
  }
  for (const auto& r : streams) {
    if (r.transport == "rdma" && r.payload_bytes == kLargeBytes && r.ratio_to_perftest) {
      std::fprintf(out, "target 1 MiB throughput >= 80%% of ib_write_bw: %.0f%% (%s)\n", *r.ratio_to_perftest * 100,
                   *r.ratio_to_perftest >= 0.8 ? "met" : "NOT met");
    }
  }
}

/// The latency cases of one round, measured one after the other in one boot.
struct LatencyRound {
  std::optional<CaseResult> write_lat;
  std::optional<CaseResult> send_lat;
  std::optional<CaseResult> shm_hop;
  std::optional<CaseResult> axon;
};

/// The round whose p50 is the median of the rounds' (the lower middle one for
/// an even count), or nullopt when no round measured the case.
std::optional<CaseResult> median_round(const std::vector<LatencyRound>& rounds,
                                       std::optional<CaseResult> LatencyRound::*which) {
  std::vector<CaseResult> measured;
  for (const LatencyRound& round : rounds) {
    if (round.*which) {
      measured.push_back(*(round.*which));
    }
  }
  if (measured.empty()) {
    return std::nullopt;
  }
  std::sort(measured.begin(), measured.end(),
            [](const CaseResult& a, const CaseResult& b) { return a.latency.p50_ns < b.latency.p50_ns; });
  return measured[(measured.size() - 1) / 2];
}

/// "40.1 39.8 41.0 us" for the case in each round that measured it.
std::string round_p50s(const std::vector<LatencyRound>& rounds, std::optional<CaseResult> LatencyRound::*which) {
  std::string text;
  for (const LatencyRound& round : rounds) {
    if (round.*which) {
      text += format_us((round.*which)->latency.p50_ns) + " ";
    }
  }
  return text + "us";
}

/// One case of this command (attempt_case(), harness/command.hpp).
template <class Measure>
auto attempt(Output& out, const std::string& what, Measure measure) {
  return attempt_case(out, "rdma", what, measure);
}

void run_rdma_command(const RdmaOptions& o, Output& out) {
  for (const auto& [option, sizes] :
       {std::pair{"--sizes", &o.sizes}, std::pair{"--throughput-sizes", &o.throughput_sizes}}) {
    for (const auto bytes : *sizes) {
      require_payload_size(bytes, option);
    }
  }
  if (o.addresses.size() != 2) {
    throw std::runtime_error("rdma: --addresses takes two IPv4 addresses of the device's network interface");
  }
  const axon::test::TempDir dir("axon-bench-rdma");
  const bool baseline = o.only != "axon";
  const bool axon = o.only != "perftest";
  NetworkCase base;
  base.cpus = choose_cpu_pair(o.cpus);
  base.shm_dirs = {dir.path() + "/shm-h0", dir.path() + "/shm-h1"};
  for (const std::string& shm_dir : base.shm_dirs) {
    std::error_code error;
    if (!std::filesystem::create_directories(shm_dir, error) || error) {
      throw std::runtime_error("rdma: cannot create " + shm_dir + ": " + error.message());
    }
  }
  base.transport = "rdma";
  base.duration_s = o.duration_s;
  base.wait = parse_wait(o.axon_wait).strategy;
  out.log.run.cpus = base.cpus;
  out.log.run.notes.push_back("rdma: " + o.device + " between " + o.addresses[0] + " and " + o.addresses[1] +
                              " (two addresses of one device; both sides in this machine), perftest and axon "
                              "pinned alike; axon ping/pong topics " +
                              o.reliability + ", stream topic reliable, receivers wait " +
                              executor_wait_name(base.wait) + "; each axon node has its own shared-memory directory");
  std::fprintf(out.text, "%s\n\n", out.log.run.notes.back().c_str());

  const PerftestSetup perftest{.device = o.device, .addresses = o.addresses, .cpus = base.cpus};
  NetworkConfig config{.pingpong_reliability = o.reliability == "reliable" ? "reliable" : "best_effort",
                       .static_peers = true,
                       .transport = "rdma",
                       .rdma_device = o.device};
  std::size_t index = 0;
  // An axon case of `bytes` on a domain of its own, its deployment config written.
  const auto axon_case = [&](std::uint64_t bytes) {
    NetworkCase c = base;
    c.payload_bytes = bytes;
    config.domain = domain_for_case(index++);
    config.payload_bytes = bytes;
    c.config_path = write_network_config(o.addresses, config, dir.path());
    return c;
  };
  std::vector<CaseResult> latencies;
  for (const auto bytes : o.sizes) {
    // Each round measures every case once, in the same order: a drift of the
    // emulation's speed within a boot then moves the rounds, not one case.
    std::vector<LatencyRound> rounds;
    for (std::uint64_t r = 0; r < o.rounds; ++r) {
      LatencyRound round;
      if (baseline) {
        if (auto p = attempt(out, "ib_write_lat " + format_bytes(bytes),
                             [&] { return run_write_lat(perftest, bytes, o.samples); })) {
          round.write_lat = perftest_latency_record(*p, "ib_write_lat");
        }
        if (auto p = attempt(out, "ib_send_lat " + format_bytes(bytes),
                             [&] { return run_send_lat(perftest, bytes, o.samples); })) {
          round.send_lat = perftest_latency_record(*p, "ib_send_lat");
        }
      }
      if (axon && baseline) {
        // The receiving side's last step, alone: axon's shared-memory ping-pong
        // of the same size between the same CPUs, spinning as the RDMA case's
        // subscribers do. With ib_send_lat it makes the floor the ratio needs.
        const LatencyCase hop{.mode = LatencyMode::kPingPong,
                              .payload_bytes = bytes,
                              .samples = o.samples,
                              .warmup = std::max<std::uint64_t>(o.samples / 10, 10),
                              .cpus = base.cpus,
                              .domain_id = domain_for_case(index++)};
        if (auto r_hop =
                attempt(out, "axon shm " + format_bytes(bytes) + " pingpong", [&] { return run_latency_case(hop); })) {
          r_hop->benchmark = "rdma";
          round.shm_hop = *r_hop;
        }
      }
      if (axon) {
        NetworkCase c = axon_case(bytes);
        c.samples = o.samples;
        c.warmup = std::max<std::uint64_t>(c.samples / 10, 10);
        if (auto r_axon = attempt(out, "axon rdma " + format_bytes(bytes) + " pingpong",
                                  [&] { return measure_axon_pingpong(c); })) {
          r_axon->benchmark = "rdma";
          round.axon = *r_axon;
        }
      }
      rounds.push_back(std::move(round));
    }
    if (o.rounds > 1) {
      std::fprintf(out.text, "%s p50 per round: ib_write_lat %s, ib_send_lat %s, axon shm %s, axon rdma %s\n",
                   format_bytes(bytes).c_str(), round_p50s(rounds, &LatencyRound::write_lat).c_str(),
                   round_p50s(rounds, &LatencyRound::send_lat).c_str(),
                   round_p50s(rounds, &LatencyRound::shm_hop).c_str(), round_p50s(rounds, &LatencyRound::axon).c_str());
    }
    // The median round of each case; the ratios are of those medians.
    const std::optional<CaseResult> reference = median_round(rounds, &LatencyRound::write_lat);
    const std::optional<CaseResult> send_reference = median_round(rounds, &LatencyRound::send_lat);
    const std::optional<CaseResult> shm_hop = median_round(rounds, &LatencyRound::shm_hop);
    std::optional<CaseResult> axon_rdma = median_round(rounds, &LatencyRound::axon);
    for (const auto& r : {reference, send_reference, shm_hop}) {
      if (r) {
        latencies.push_back(*r);
      }
    }
    if (axon_rdma) {
      CaseResult& r = *axon_rdma;
      if (reference && reference->latency.p50_ns > 0) {
        r.ratio_to_perftest = r.latency.p50_ns / reference->latency.p50_ns;
      }
      if (send_reference && send_reference->latency.p50_ns > 0) {
        r.ratio_to_send_lat = r.latency.p50_ns / send_reference->latency.p50_ns;
      }
      if (send_reference && shm_hop && send_reference->latency.p50_ns + shm_hop->latency.p50_ns > 0) {
        r.ratio_to_floor = r.latency.p50_ns / (send_reference->latency.p50_ns + shm_hop->latency.p50_ns);
      }
      latencies.push_back(r);
    }
  }
  std::vector<CaseResult> streams;
  for (const auto bytes : o.throughput_sizes) {
    std::optional<CaseResult> reference;
    if (baseline) {
      if (auto p = attempt(out, "ib_write_bw " + format_bytes(bytes),
                           [&] { return run_write_bw(perftest, bytes, o.bw_iterations); })) {
        reference = perftest_bandwidth_record(*p);
        streams.push_back(*reference);
      }
    }
    if (axon) {
      NetworkCase c = axon_case(bytes);
      c.warmup = 20;
      if (auto r = attempt(out, "axon rdma " + format_bytes(bytes) + " throughput",
                           [&] { return measure_axon_throughput(c); })) {
        r->benchmark = "rdma";
        if (reference && reference->mb_per_s.value_or(0) > 0) {
          r->ratio_to_perftest = r->mb_per_s.value_or(0) / *reference->mb_per_s;
        }
        streams.push_back(*r);
      }
    }
  }
  std::fprintf(out.text, "\n");
  print_latency_table(out.text, latencies);
  print_throughput_table(out.text, streams);
  print_targets(out.text, latencies, streams);
  out.record(latencies);
  out.record(streams);
}

}  // namespace

Command add_rdma_command(CLI::App& app) {
  auto options = std::make_shared<RdmaOptions>();
  CLI::App* cmd = add_measuring_command(
      app, "rdma",
      "axon's RDMA transport between two addresses of one RDMA device, next to perftest's ib_write_lat and "
      "ib_write_bw measured in the same run between the same addresses: one-way latency per size, and "
      "throughput, as ratios. Needs an RDMA device with a RoCE v2 GID for both addresses (scripts/bench-rdma.sh "
      "runs it in the Soft-RoCE guest) and perftest.");
  cmd->add_option("--device", options->device, "The RDMA device both hosts name (rdma_device)")->capture_default_str();
  cmd->add_option("--addresses", options->addresses,
                  "Host 0's and host 1's IPv4 addresses, both on the device's network interface")
      ->delimiter(',')
      ->expected(2)
      ->capture_default_str();
  add_size_list_option(*cmd, "--sizes", options->sizes, "Latency payload sizes, powers of two");
  add_size_list_option(*cmd, "--throughput-sizes", options->throughput_sizes, "Throughput payload sizes (empty: none)");
  cmd->add_option("--samples", options->samples, "Round trips per size (perftest's -n)")
      ->check(CLI::Range(100, 10'000'000))
      ->capture_default_str();
  cmd->add_option("--rounds", options->rounds,
                  "Latency rounds per size, each measuring every case once in the same order; the table shows "
                  "each case's median round and the ratios are of those medians")
      ->check(CLI::Range(1, 99))
      ->capture_default_str();
  cmd->add_option("--duration", options->duration_s, "Seconds axon's throughput is measured per size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--bw-iterations", options->bw_iterations,
                  "Writes ib_write_bw makes per size (its -n; its duration mode -D counts no iteration of 1 MiB "
                  "writes on rxe)")
      ->check(CLI::Range(10, 1'000'000))
      ->capture_default_str();
  add_cpu_pair_option(*cmd, options->cpus, cpu_pair_help("host 0"));
  cmd->add_option("--only", options->only, "perftest, axon or both")
      ->check(CLI::IsMember({"perftest", "axon", "both"}))
      ->capture_default_str();
  cmd->add_option("--reliability", options->reliability, "QoS of the ping and pong topics")
      ->check(CLI::IsMember({"best-effort", "reliable"}))
      ->capture_default_str();
  cmd->add_option("--axon-wait", options->axon_wait,
                  "How axon's receivers wait in their WaitSet: busy-spin (like perftest's busy polling), "
                  "spin-yield-sleep or blocking")
      ->check(CLI::IsMember({"blocking", "spin-yield-sleep", "busy-spin"}))
      ->capture_default_str();
  return {cmd, [options](Output& out) { run_rdma_command(*options, out); }};
}

}  // namespace axon_bench
